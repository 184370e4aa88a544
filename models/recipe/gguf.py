"""A minimal GGUF v3 writer and reader (standard library + numpy only).

Tensors: f32, f16 and q8_0. A 2-D weight of PyTorch shape (out, in) is written as-is, row-major,
with GGUF dims [in, out] (ne[0] is the fastest-varying axis), which is what llama.cpp expects.
"""
import struct

import numpy as np

GGUF_MAGIC = b'GGUF'
GGUF_VERSION = 3
ALIGNMENT = 32

# GGUF metadata value types
UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64, INT64, FLOAT64 = range(13)
# ggml tensor types
GGML_F32, GGML_F16, GGML_Q8_0 = 0, 1, 8
QK8_0 = 32


class U32(int):
    """Marks an int to be written as uint32 (the default for ints is int32... see _type_of)."""


class I32(int):
    pass


class F32(float):
    pass


def _type_of(v):
    if isinstance(v, bool):
        return BOOL
    if isinstance(v, U32):
        return UINT32
    if isinstance(v, I32):
        return INT32
    if isinstance(v, int):
        return UINT32 if v >= 0 else INT32
    if isinstance(v, float):
        return FLOAT32
    if isinstance(v, str):
        return STRING
    if isinstance(v, (list, tuple)):
        return ARRAY
    raise TypeError(f'unsupported metadata value {v!r}')


def _str(s):
    b = s.encode('utf-8')
    return struct.pack('<Q', len(b)) + b


def _scalar(t, v):
    fmt = {UINT8: '<B', INT8: '<b', UINT16: '<H', INT16: '<h', UINT32: '<I', INT32: '<i', FLOAT32: '<f',
           BOOL: '<?', UINT64: '<Q', INT64: '<q', FLOAT64: '<d'}[t]
    return struct.pack(fmt, v)


def _value(v, t=None):
    t = _type_of(v) if t is None else t
    if t == STRING:
        return _str(v)
    if t == ARRAY:
        et = _type_of(v[0]) if len(v) else INT32
        if et == UINT32 and any(isinstance(x, I32) for x in v):
            et = INT32
        out = [struct.pack('<IQ', et, len(v))]
        if et == STRING:
            out.extend(_str(x) for x in v)
        elif et == INT32:
            out.append(np.asarray(v, dtype='<i4').tobytes())
        elif et == UINT32:
            out.append(np.asarray(v, dtype='<u4').tobytes())
        elif et == FLOAT32:
            out.append(np.asarray(v, dtype='<f4').tobytes())
        else:
            out.extend(_scalar(et, x) for x in v)
        return b''.join(out)
    return _scalar(t, v)


def quantize_q8_0(a):
    """float array (..., n) with n % 32 == 0 -> q8_0 bytes: per block f16 scale + 32 int8."""
    a = np.asarray(a, dtype=np.float32).reshape(-1, QK8_0)
    amax = np.abs(a).max(axis=1, keepdims=True)
    d = amax / 127.0
    inv = np.where(d > 0, 1.0 / np.where(d > 0, d, 1), 0)
    q = np.round(a * inv).clip(-127, 127).astype(np.int8)
    blocks = np.zeros(a.shape[0], dtype=[('d', '<f2'), ('qs', 'i1', (QK8_0,))])
    blocks['d'] = d[:, 0].astype(np.float16)
    blocks['qs'] = q
    return blocks.tobytes()


def dequantize_q8_0(raw, n):
    blocks = np.frombuffer(raw, dtype=[('d', '<f2'), ('qs', 'i1', (QK8_0,))], count=n // QK8_0)
    return (blocks['qs'].astype(np.float32) * blocks['d'].astype(np.float32)[:, None]).reshape(-1)


def write(path, metadata, tensors):
    """metadata: dict key -> value (use U32/I32/F32 wrappers to pin types);
    tensors: list of (name, numpy array in PyTorch layout, ggml type)."""
    infos, blobs, offset = [], [], 0
    for name, arr, gtype in tensors:
        arr = np.ascontiguousarray(arr)
        dims = list(reversed(arr.shape))
        if gtype == GGML_F32:
            data = arr.astype('<f4').tobytes()
        elif gtype == GGML_F16:
            data = arr.astype('<f2').tobytes()
        elif gtype == GGML_Q8_0:
            if arr.shape[-1] % QK8_0:
                raise ValueError(f'{name}: row size {arr.shape[-1]} is not a multiple of {QK8_0} for q8_0')
            data = quantize_q8_0(arr)
        else:
            raise ValueError(f'unsupported ggml type {gtype}')
        infos.append(_str(name) + struct.pack('<I', len(dims)) + struct.pack(f'<{len(dims)}Q', *dims) + struct.pack('<IQ', gtype, offset))
        pad = (-len(data)) % ALIGNMENT
        blobs.append(data + b'\0' * pad)
        offset += len(data) + pad
    head = [GGUF_MAGIC, struct.pack('<IQQ', GGUF_VERSION, len(tensors), len(metadata))]
    for k, v in metadata.items():
        t = _type_of(v)
        head.append(_str(k) + struct.pack('<I', t) + _value(v, t))
    head.extend(infos)
    header = b''.join(head)
    header += b'\0' * ((-len(header)) % ALIGNMENT)
    with open(path, 'wb') as f:
        f.write(header)
        for b in blobs:
            f.write(b)


def read(path):
    """(metadata dict, {name: (dims, ggml type, numpy float32 array in PyTorch layout)})."""
    with open(path, 'rb') as f:
        buf = f.read()
    pos = 0

    def take(fmt):
        nonlocal pos
        vals = struct.unpack_from(fmt, buf, pos)
        pos += struct.calcsize(fmt)
        return vals if len(vals) > 1 else vals[0]

    def rstr():
        nonlocal pos
        n = take('<Q')
        s = buf[pos:pos + n].decode('utf-8')
        pos += n
        return s

    def rval(t):
        if t == STRING:
            return rstr()
        if t == ARRAY:
            et, n = take('<I'), take('<Q')
            return [rval(et) for _ in range(n)]
        fmt = {UINT8: '<B', INT8: '<b', UINT16: '<H', INT16: '<h', UINT32: '<I', INT32: '<i', FLOAT32: '<f',
               BOOL: '<?', UINT64: '<Q', INT64: '<q', FLOAT64: '<d'}[t]
        return take(fmt)

    if buf[:4] != GGUF_MAGIC:
        raise ValueError('not a GGUF file')
    pos = 4
    version, n_tensors, n_kv = take('<IQQ')
    meta = {}
    for _ in range(n_kv):
        k = rstr()
        meta[k] = rval(take('<I'))
    infos = []
    for _ in range(n_tensors):
        name = rstr()
        nd = take('<I')
        dims = list(struct.unpack_from(f'<{nd}Q', buf, pos))
        pos += 8 * nd
        gtype, off = take('<IQ')
        infos.append((name, dims, gtype, off))
    base = pos + ((-pos) % meta.get('general.alignment', ALIGNMENT))
    tensors = {}
    for name, dims, gtype, off in infos:
        n = int(np.prod(dims))
        shape = tuple(reversed(dims))
        start = base + off
        if gtype == GGML_F32:
            a = np.frombuffer(buf, '<f4', n, start)
        elif gtype == GGML_F16:
            a = np.frombuffer(buf, '<f2', n, start).astype(np.float32)
        elif gtype == GGML_Q8_0:
            a = dequantize_q8_0(buf[start:start + n // QK8_0 * 34], n)
        else:
            raise ValueError(f'unsupported ggml type {gtype}')
        tensors[name] = (dims, gtype, a.reshape(shape))
    return meta, tensors
