import { baseName } from '@flint/protocol';
import { fetchZip, uploadZip, type UploadResult } from '../api/projectApi';
import { formatBytes } from '../project/binaryFiles';
import { collectDroppedFiles, collectPickedFiles, totalBytes, uploadBody, type CollectedFiles, type DroppedEntry } from '../project/droppedFiles';
import { linkCredentials as credentials, selectCanEdit, useConnection } from './connectionStore';
import { showNotice, useWorkspace, type NoticeMessage } from './workspaceStore';

/**
 * Files in and out of a workspace over REST: an upload (dropped or picked files, zipped here, or
 * a .zip as it is) and a download of the workspace or a folder as a zip. Progress and results
 * are said in the Notice.
 */

/** What the gateway unpacks from one upload at most (its maxUnpackedBytes): larger drops are refused before zipping. */
export const maxUploadBytes = 256 * 1024 * 1024;
/** The largest zip the gateway takes in one request (its maxUploadBytes). */
export const maxZipBytes = 50 * 1024 * 1024;

let uploading = false;

/** Uploads what was dropped on the tree into `folder` ('' the workspace root). */
export function uploadDropped(folder: string, roots: readonly DroppedEntry[]): Promise<void> {
  return upload(folder, () => collectDroppedFiles(roots));
}

/** Uploads files picked with the tree's Upload… button into `folder`. */
export function uploadPicked(folder: string, files: readonly File[]): Promise<void> {
  return upload(folder, async () => collectPickedFiles(files));
}

const where = (folder: string) => (folder === '' ? 'the workspace' : folder);
const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;

async function upload(folder: string, collect: () => Promise<CollectedFiles>): Promise<void> {
  const auth = credentials();
  if (!auth || !selectCanEdit(useConnection.getState())) return;
  if (uploading) {
    showNotice('An upload is still under way. Drop more files once it is done.', 'warn');
    return;
  }
  uploading = true;
  try {
    showNotice('Reading the files…', 'info', true);
    let collected: CollectedFiles;
    try {
      collected = await collect();
    } catch (error) {
      console.warn('Flint: could not read the dropped files', error);
      showNotice('The browser could not read the dropped files. Try again, or upload them as a .zip.');
      return;
    }
    const { files, leftOut } = collected;
    const bytes = totalBytes(files);
    if (files.size === 0) {
      showNotice(leftOut.length > 0 ? `Nothing to upload: only ${leftOut.join(', ')}, which are left out.` : 'Nothing to upload: the drop held no files.', 'warn');
      return;
    }
    if (bytes > maxUploadBytes) {
      showNotice(`${formatBytes(bytes)} is too much to upload from the browser (at most ${formatBytes(maxUploadBytes)}). Upload fewer files at a time.`);
      return;
    }
    const what = files.size === 1 ? ([...files.keys()][0] ?? 'one file') : plural(files.size, 'file');
    showNotice(`Uploading ${what} (${formatBytes(bytes)}) to ${where(folder)}…`, 'info', true);
    let body: Uint8Array<ArrayBuffer>;
    try {
      body = await uploadBody(files);
    } catch (error) {
      console.warn('Flint: could not zip the files to upload', error);
      showNotice('The files could not be zipped for the upload. Try fewer at a time, or upload a .zip.');
      return;
    }
    if (body.byteLength > maxZipBytes) {
      showNotice(`Zipped, this is ${formatBytes(body.byteLength)}; the gateway takes at most ${formatBytes(maxZipBytes)} at a time. Upload a folder at a time.`);
      return;
    }
    const result = await uploadZip(auth.workspaceId, auth.token, folder, body, (sent, total) => {
      if (total > 0 && sent < total) showNotice(`Uploading ${what} to ${where(folder)}… ${Math.floor((sent / total) * 100)}%`, 'info', true);
      else showNotice(`Unpacking ${what} into ${where(folder)}…`, 'info', true);
    });
    if (!result.ok) showNotice(`The upload failed: ${result.message}`);
    else {
      const report = describeUpload(result.value, folder, leftOut);
      showNotice(report.text, report.tone);
    }
  } finally {
    uploading = false;
  }
}

/** What an upload did, in a few lines: counts, then the skipped files and why (the first few). */
export function describeUpload(result: UploadResult, folder: string, leftOut: readonly string[] = []): Omit<NoticeMessage, 'busy'> {
  const { created, updated, skipped } = result;
  const done = [created.length > 0 && `${created.length} created`, updated.length > 0 && `${updated.length} updated`].filter(Boolean).join(', ');
  const lines = [done ? `Uploaded to ${where(folder)}: ${done}.` : `Nothing was added to ${where(folder)}.`];
  if (skipped.length > 0) {
    const shown = skipped.slice(0, 3).map(({ path, reason }) => `${path} (${reason})`);
    const more = skipped.length > shown.length ? `, and ${skipped.length - shown.length} more` : '';
    lines.push(`${plural(skipped.length, 'file')} skipped: ${shown.join('; ')}${more}.`);
  }
  if (leftOut.length > 0) lines.push(`Left out: ${leftOut.slice(0, 3).join(', ')}${leftOut.length > 3 ? ', …' : ''}.`);
  const tone = skipped.length === 0 ? 'info' : done ? 'warn' : 'error';
  return { text: lines.join('\n'), tone };
}

/** Saves a zip of the workspace (`folder` '') or of one folder through the browser's downloads. */
export async function downloadZip(folder: string): Promise<void> {
  const auth = credentials();
  if (!auth) return;
  showNotice(`Preparing ${folder === '' ? 'the workspace' : folder} as a zip…`, 'info', true);
  const result = await fetchZip(auth.workspaceId, auth.token, folder);
  if (!result.ok) {
    showNotice(`The download failed: ${result.message}`);
    return;
  }
  const fallback = `${folder === '' ? (useConnection.getState().workspaceName ?? 'workspace') : baseName(folder)}.zip`;
  saveBlob(result.value.blob, result.value.fileName ?? fallback);
  if (useWorkspace.getState().notice?.busy) useWorkspace.setState({ notice: null });
}

/** A link to a blob URL clicked in script: the token stays in a header, never in a URL. */
function saveBlob(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  link.rel = 'noopener';
  document.body.append(link);
  link.click();
  link.remove();
  // Revoking at once can cancel the download before the browser has read the blob.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
