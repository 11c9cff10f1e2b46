// SPDX-License-Identifier: MIT
/*
 * Every call that submits work to the GPU passes the compute gate (gate.h)
 * first: kernel launches of each kind (the pre-4.0 cuLaunch / cuLaunchGrid
 * too), graph launches, stream-ordered copies of every shape (linear, 2D,
 * 3D, peer, array, batches; decompression), memsets of every shape, stream
 * memory operations and host functions. Even the copies and the CPU-side
 * host functions occupy the stream while they run, so work queued behind
 * them runs in whoever's slice they end in; gating them keeps a stream's work
 * inside its own slices.
 *
 * A launch into a stream being captured into a graph submits nothing, but is
 * gated like any other (the gate cannot tell without a driver call per
 * launch); it costs a wait for the slice during capture, never a wrong share.
 * A call without a current context is gated on the GPU of its stream's
 * context (gate_bind), where the driver runs it.
 *
 * Left to the driver, with the reason: synchronous copies and memsets (they
 * wait for the stream's earlier work, which was gated, and return when done:
 * nothing is left queued); cuLaunchCooperativeKernelMultiDevice (deprecated
 * since CUDA 11.3, spans several GPUs at once).
 */
#include "gate.h"

/* s: the stream the call queues on (NULL for calls that take none). */
#define GATED(name, s, params, ...)                     \
	CGPU_EXPORT CUresult name params                \
	{                                               \
		struct gate *g;                         \
		CUresult r;                             \
                                                        \
		NEED_CUDA();                            \
		g = gate_begin(s);                      \
		r = CALL(name, __VA_ARGS__);            \
		gate_end(g);                            \
		return r;                               \
	}
#define CALL REAL_CU

#define LAUNCH_PARAMS                                                      \
	(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,  \
	 unsigned int bx, unsigned int by, unsigned int bz, unsigned int sm, \
	 CUstream s, void **params, void **extra)
GATED(cuLaunchKernel, s, LAUNCH_PARAMS, f, gx, gy, gz, bx, by, bz, sm, s, params, extra)
GATED(cuLaunchKernel_ptsz, s, LAUNCH_PARAMS, f, gx, gy, gz, bx, by, bz, sm, s, params,
      extra)

#define EX_PARAMS (const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
GATED(cuLaunchKernelEx, c ? c->hStream : NULL, EX_PARAMS, c, f, params, extra)
GATED(cuLaunchKernelEx_ptsz, c ? c->hStream : NULL, EX_PARAMS, c, f, params, extra)

#define COOP_PARAMS                                                        \
	(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,  \
	 unsigned int bx, unsigned int by, unsigned int bz, unsigned int sm, \
	 CUstream s, void **params)
GATED(cuLaunchCooperativeKernel, s, COOP_PARAMS, f, gx, gy, gz, bx, by, bz, sm, s, params)
GATED(cuLaunchCooperativeKernel_ptsz, s, COOP_PARAMS, f, gx, gy, gz, bx, by, bz, sm, s,
      params)

/* Before CUDA 4.0: the block shape set beforehand (cuFuncSetBlockShape). */
GATED(cuLaunch, NULL, (CUfunction f), f)
GATED(cuLaunchGrid, NULL, (CUfunction f, int w, int h), f, w, h)
GATED(cuLaunchGridAsync, s, (CUfunction f, int w, int h, CUstream s), f, w, h, s)

/* A graph launch maps its memory (hook_graph.c charges it); the gate's own
 * tests build this file without that part. */
CUresult cgpu_graph_launch(CUresult (*fn)(CUgraphExec, CUstream), CUgraphExec e,
			   CUstream s) __attribute__((weak));
#undef CALL
#define CALL(n, e, s) \
	(cgpu_graph_launch ? cgpu_graph_launch(real_##n, e, s) : REAL_CU(n, e, s))
GATED(cuGraphLaunch, s, (CUgraphExec e, CUstream s), e, s)
GATED(cuGraphLaunch_ptsz, s, (CUgraphExec e, CUstream s), e, s)
#undef CALL
#define CALL REAL_CU

GATED(cuLaunchHostFunc, s, (CUstream s, CUhostFn fn, void *data), s, fn, data)
GATED(cuLaunchHostFunc_ptsz, s, (CUstream s, CUhostFn fn, void *data), s, fn, data)
GATED(cuLaunchHostFunc_v2, s, (CUstream s, CUhostFn fn, void *data, unsigned int mode), s,
      fn, data, mode)

#define COPY_PARAMS (CUdeviceptr d, CUdeviceptr src, size_t n, CUstream s)
GATED(cuMemcpyAsync, s, COPY_PARAMS, d, src, n, s)
GATED(cuMemcpyAsync_ptsz, s, COPY_PARAMS, d, src, n, s)
GATED(cuMemcpyDtoDAsync_v2, s, COPY_PARAMS, d, src, n, s)
GATED(cuMemcpyDtoDAsync_v2_ptsz, s, COPY_PARAMS, d, src, n, s)
GATED(cuMemcpyDtoDAsync, s, (CUdeviceptr_v1 d, CUdeviceptr_v1 src, unsigned int n,
			     CUstream s), d, src, n, s)

#define HTOD_PARAMS (CUdeviceptr d, const void *src, size_t n, CUstream s)
GATED(cuMemcpyHtoDAsync_v2, s, HTOD_PARAMS, d, src, n, s)
GATED(cuMemcpyHtoDAsync_v2_ptsz, s, HTOD_PARAMS, d, src, n, s)
GATED(cuMemcpyHtoDAsync, s, (CUdeviceptr_v1 d, const void *src, unsigned int n,
			     CUstream s), d, src, n, s)

#define DTOH_PARAMS (void *d, CUdeviceptr src, size_t n, CUstream s)
GATED(cuMemcpyDtoHAsync_v2, s, DTOH_PARAMS, d, src, n, s)
GATED(cuMemcpyDtoHAsync_v2_ptsz, s, DTOH_PARAMS, d, src, n, s)
GATED(cuMemcpyDtoHAsync, s, (void *d, CUdeviceptr_v1 src, unsigned int n, CUstream s), d,
      src, n, s)

#define PEER_PARAMS                                                     \
	(CUdeviceptr d, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n, \
	 CUstream s)
GATED(cuMemcpyPeerAsync, s, PEER_PARAMS, d, dc, src, sc, n, s)
GATED(cuMemcpyPeerAsync_ptsz, s, PEER_PARAMS, d, dc, src, sc, n, s)

#define HTOA_PARAMS (CUarray a, size_t off, const void *src, size_t n, CUstream s)
GATED(cuMemcpyHtoAAsync_v2, s, HTOA_PARAMS, a, off, src, n, s)
GATED(cuMemcpyHtoAAsync_v2_ptsz, s, HTOA_PARAMS, a, off, src, n, s)
GATED(cuMemcpyHtoAAsync, s, (CUarray a, unsigned int off, const void *src, unsigned int n,
			     CUstream s), a, off, src, n, s)

#define ATOH_PARAMS (void *d, CUarray a, size_t off, size_t n, CUstream s)
GATED(cuMemcpyAtoHAsync_v2, s, ATOH_PARAMS, d, a, off, n, s)
GATED(cuMemcpyAtoHAsync_v2_ptsz, s, ATOH_PARAMS, d, a, off, n, s)
GATED(cuMemcpyAtoHAsync, s, (void *d, CUarray a, unsigned int off, unsigned int n,
			     CUstream s), d, a, off, n, s)

GATED(cuMemcpy2DAsync_v2, s, (const CUDA_MEMCPY2D *p, CUstream s), p, s)
GATED(cuMemcpy2DAsync_v2_ptsz, s, (const CUDA_MEMCPY2D *p, CUstream s), p, s)
GATED(cuMemcpy2DAsync, s, (const CUDA_MEMCPY2D_v1 *p, CUstream s), p, s)
GATED(cuMemcpy3DAsync_v2, s, (const CUDA_MEMCPY3D *p, CUstream s), p, s)
GATED(cuMemcpy3DAsync_v2_ptsz, s, (const CUDA_MEMCPY3D *p, CUstream s), p, s)
GATED(cuMemcpy3DAsync, s, (const CUDA_MEMCPY3D_v1 *p, CUstream s), p, s)
GATED(cuMemcpy3DPeerAsync, s, (const CUDA_MEMCPY3D_PEER *p, CUstream s), p, s)
GATED(cuMemcpy3DPeerAsync_ptsz, s, (const CUDA_MEMCPY3D_PEER *p, CUstream s), p, s)

/* Batches of copies (CUDA 12.8; _v2 13.0 without failIdx), copies with
 * attributes (13.2) and batch decompression (12.8), each on one stream. */
#define COPIES_PARAMS(...)                                                   \
	(CUdeviceptr *d, CUdeviceptr *src, size_t *n, size_t count,          \
	 CUmemcpyAttributes *at, size_t *ai, size_t na, __VA_ARGS__ CUstream s)
#define COPIES_ARGS d, src, n, count, at, ai, na
GATED(cuMemcpyBatchAsync, s, COPIES_PARAMS(size_t *fi,), COPIES_ARGS, fi, s)
GATED(cuMemcpyBatchAsync_ptsz, s, COPIES_PARAMS(size_t *fi,), COPIES_ARGS, fi, s)
GATED(cuMemcpyBatchAsync_v2, s, COPIES_PARAMS(), COPIES_ARGS, s)
GATED(cuMemcpyBatchAsync_v2_ptsz, s, COPIES_PARAMS(), COPIES_ARGS, s)
#define BATCH3D_PARAMS \
	(size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, size_t *fi, unsigned long long fl, CUstream s)
#define BATCH3D_V2_PARAMS \
	(size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, unsigned long long fl, CUstream s)
GATED(cuMemcpy3DBatchAsync, s, BATCH3D_PARAMS, n, ops, fi, fl, s)
GATED(cuMemcpy3DBatchAsync_ptsz, s, BATCH3D_PARAMS, n, ops, fi, fl, s)
GATED(cuMemcpy3DBatchAsync_v2, s, BATCH3D_V2_PARAMS, n, ops, fl, s)
GATED(cuMemcpy3DBatchAsync_v2_ptsz, s, BATCH3D_V2_PARAMS, n, ops, fl, s)
GATED(cuMemcpyWithAttributesAsync, s,
      (CUdeviceptr d, CUdeviceptr src, size_t n, CUmemcpyAttributes *at, CUstream s), d,
      src, n, at, s)
GATED(cuMemcpy3DWithAttributesAsync, s,
      (CUDA_MEMCPY3D_BATCH_OP *op, unsigned long long fl, CUstream s), op, fl, s)
GATED(cuMemBatchDecompressAsync, s,
      (CUmemDecompressParams *p, size_t n, unsigned int fl, size_t *ei, CUstream s), p, n,
      fl, ei, s)

GATED(cuMemsetD8Async, s, (CUdeviceptr d, unsigned char v, size_t n, CUstream s), d, v,
      n, s)
GATED(cuMemsetD8Async_ptsz, s, (CUdeviceptr d, unsigned char v, size_t n, CUstream s), d,
      v, n, s)
GATED(cuMemsetD16Async, s, (CUdeviceptr d, unsigned short v, size_t n, CUstream s), d, v,
      n, s)
GATED(cuMemsetD16Async_ptsz, s, (CUdeviceptr d, unsigned short v, size_t n, CUstream s),
      d, v, n, s)
GATED(cuMemsetD32Async, s, (CUdeviceptr d, unsigned int v, size_t n, CUstream s), d, v,
      n, s)
GATED(cuMemsetD32Async_ptsz, s, (CUdeviceptr d, unsigned int v, size_t n, CUstream s), d,
      v, n, s)

#define D2D_PARAMS(T) \
	(CUdeviceptr d, size_t pitch, T v, size_t w, size_t h, CUstream s)
GATED(cuMemsetD2D8Async, s, D2D_PARAMS(unsigned char), d, pitch, v, w, h, s)
GATED(cuMemsetD2D8Async_ptsz, s, D2D_PARAMS(unsigned char), d, pitch, v, w, h, s)
GATED(cuMemsetD2D16Async, s, D2D_PARAMS(unsigned short), d, pitch, v, w, h, s)
GATED(cuMemsetD2D16Async_ptsz, s, D2D_PARAMS(unsigned short), d, pitch, v, w, h, s)
GATED(cuMemsetD2D32Async, s, D2D_PARAMS(unsigned int), d, pitch, v, w, h, s)
GATED(cuMemsetD2D32Async_ptsz, s, D2D_PARAMS(unsigned int), d, pitch, v, w, h, s)

/* A wait holds the stream (and what is queued behind it) on the GPU until
 * the value comes; a write is work on the GPU like a memset. */
#define VALUE_PARAMS(T) (CUstream s, CUdeviceptr a, T v, unsigned int fl)
GATED(cuStreamWaitValue32, s, VALUE_PARAMS(cuuint32_t), s, a, v, fl)
GATED(cuStreamWaitValue32_ptsz, s, VALUE_PARAMS(cuuint32_t), s, a, v, fl)
GATED(cuStreamWaitValue32_v2, s, VALUE_PARAMS(cuuint32_t), s, a, v, fl)
GATED(cuStreamWaitValue32_v2_ptsz, s, VALUE_PARAMS(cuuint32_t), s, a, v, fl)
GATED(cuStreamWaitValue64, s, VALUE_PARAMS(cuuint64_t), s, a, v, fl)
GATED(cuStreamWaitValue64_ptsz, s, VALUE_PARAMS(cuuint64_t), s, a, v, fl)
GATED(cuStreamWaitValue64_v2, s, VALUE_PARAMS(cuuint64_t), s, a, v, fl)
GATED(cuStreamWaitValue64_v2_ptsz, s, VALUE_PARAMS(cuuint64_t), s, a, v, fl)
GATED(cuStreamWriteValue32, s, VALUE_PARAMS(cuuint32_t), s, a, v, fl)
GATED(cuStreamWriteValue32_ptsz, s, VALUE_PARAMS(cuuint32_t), s, a, v, fl)
GATED(cuStreamWriteValue32_v2, s, VALUE_PARAMS(cuuint32_t), s, a, v, fl)
GATED(cuStreamWriteValue32_v2_ptsz, s, VALUE_PARAMS(cuuint32_t), s, a, v, fl)
GATED(cuStreamWriteValue64, s, VALUE_PARAMS(cuuint64_t), s, a, v, fl)
GATED(cuStreamWriteValue64_ptsz, s, VALUE_PARAMS(cuuint64_t), s, a, v, fl)
GATED(cuStreamWriteValue64_v2, s, VALUE_PARAMS(cuuint64_t), s, a, v, fl)
GATED(cuStreamWriteValue64_v2_ptsz, s, VALUE_PARAMS(cuuint64_t), s, a, v, fl)

#define BATCH_PARAMS \
	(CUstream s, unsigned int n, CUstreamBatchMemOpParams *ops, unsigned int fl)
GATED(cuStreamBatchMemOp, s, BATCH_PARAMS, s, n, ops, fl)
GATED(cuStreamBatchMemOp_ptsz, s, BATCH_PARAMS, s, n, ops, fl)
GATED(cuStreamBatchMemOp_v2, s, BATCH_PARAMS, s, n, ops, fl)
GATED(cuStreamBatchMemOp_v2_ptsz, s, BATCH_PARAMS, s, n, ops, fl)
