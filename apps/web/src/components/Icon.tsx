/** A small set of 16px line icons, drawn inline so nothing loads from elsewhere. */
const paths = {
  newFile: 'M9.5 1.5H4a1 1 0 0 0-1 1v11a1 1 0 0 0 1 1h8a1 1 0 0 0 1-1V5L9.5 1.5ZM9.5 1.5V5H13M8 8v4M6 10h4',
  newFolder: 'M1.5 3.5a1 1 0 0 1 1-1h3.3l1.5 1.5h6.2a1 1 0 0 1 1 1v7.5a1 1 0 0 1-1 1h-11a1 1 0 0 1-1-1v-9ZM8 7v4M6 9h4',
  chevron: 'M6 4l4 4-4 4',
  close: 'M4.5 4.5l7 7M11.5 4.5l-7 7',
  trash: 'M2.5 4h11M6 4V2.5h4V4M4 4l.7 9.5h6.6L12 4M6.8 6.5v5M9.2 6.5v5',
  pencil: 'M10.5 2.5l3 3-8 8H2.5v-3l8-8Z',
  share: 'M11 5.5a2 2 0 1 0 0-4 2 2 0 0 0 0 4ZM5 10a2 2 0 1 0 0-4 2 2 0 0 0 0 4ZM11 14.5a2 2 0 1 0 0-4 2 2 0 0 0 0 4ZM6.8 9l2.4 1.6M9.2 5.4 6.8 7',
  file: 'M9.5 1.5H4a1 1 0 0 0-1 1v11a1 1 0 0 0 1 1h8a1 1 0 0 0 1-1V5L9.5 1.5ZM9.5 1.5V5H13',
  folder: 'M1.5 3.5a1 1 0 0 1 1-1h3.3l1.5 1.5h6.2a1 1 0 0 1 1 1v7.5a1 1 0 0 1-1 1h-11a1 1 0 0 1-1-1v-9Z',
  eye: 'M1 8s2.5-4.5 7-4.5S15 8 15 8s-2.5 4.5-7 4.5S1 8 1 8ZM8 10a2 2 0 1 0 0-4 2 2 0 0 0 0 4Z',
  copy: 'M5.5 5.5h7v8h-7zM3.5 10.5v-8h7',
  spark: 'M8 1.5l1.5 5 5 1.5-5 1.5-1.5 5-1.5-5-5-1.5 5-1.5L8 1.5Z',
  check: 'M3 8.5l3 3 7-7',
  send: 'M2.5 8h9M8 4l4 4-4 4',
  stop: 'M4.5 4.5h7v7h-7z',
  upload: 'M8 10.5V2.5M5 5.5l3-3 3 3M2.5 10v3a1 1 0 0 0 1 1h9a1 1 0 0 0 1-1v-3',
  download: 'M8 2.5v8M5 7.5l3 3 3-3M2.5 10v3a1 1 0 0 0 1 1h9a1 1 0 0 0 1-1v-3',
  branch: 'M3.5 3.5a1.5 1.5 0 1 0 3 0a1.5 1.5 0 1 0-3 0M3.5 12.5a1.5 1.5 0 1 0 3 0a1.5 1.5 0 1 0-3 0M9.5 4.5a1.5 1.5 0 1 0 3 0a1.5 1.5 0 1 0-3 0M5 5v6M11 6c0 2.5-6 2-6 5',
  binary: 'M9.5 1.5H4a1 1 0 0 0-1 1v11a1 1 0 0 0 1 1h8a1 1 0 0 0 1-1V5L9.5 1.5ZM9.5 1.5V5H13M5.5 8.5l1-.5v4M9 8h1.5v4H9z',
  refresh: 'M13 8a5 5 0 1 1-1.5-3.6M13 2.5v2.5h-2.5',
  back: 'M10 3.5L5.5 8l4.5 4.5',
  sidebar: 'M2.5 3.5a1 1 0 0 1 1-1h9a1 1 0 0 1 1 1v9a1 1 0 0 1-1 1h-9a1 1 0 0 1-1-1v-9ZM6 2.5v11',
} as const;

export type IconName = keyof typeof paths;

export function Icon({ name, className }: { name: IconName; className?: string }) {
  return (
    <svg className={className ? `icon ${className}` : 'icon'} width="16" height="16" viewBox="0 0 16 16" aria-hidden="true">
      <path d={paths[name]} fill="none" stroke="currentColor" strokeWidth="1.2" strokeLinecap="round" strokeLinejoin="round" />
    </svg>
  );
}
