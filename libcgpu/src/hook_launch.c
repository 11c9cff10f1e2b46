// SPDX-License-Identifier: MIT
/*
 * Every call that submits work to the GPU passes the compute gate (gate.h)
 * first: kernel launches of each kind, graph launches, and the stream-ordered
 * copies and memsets of linear memory. A launch into a stream being captured
 * into a graph submits nothing, but is gated like any other (the gate cannot
 * tell without a driver call per launch); it costs a wait for the slice
 * during capture, never a wrong share.
 *
 * Left to the driver, with the reason: synchronous copies and memsets (they
 * wait for the stream's earlier work, which was gated, and move bytes with
 * the copy engines, not compute time); 2D/3D, array and peer copies (copy
 * engines as well; rare in the frameworks cgpu serves); cuLaunchHostFunc
 * (runs on the CPU); cuLaunchCooperativeKernelMultiDevice (deprecated since
 * CUDA 11.3, spans several GPUs at once); entry points older than CUDA 3.2.
 */
#include "gate.h"

#define GATED(name, params, ...)                        \
	CGPU_EXPORT CUresult name params                \
	{                                               \
		struct gate *g;                         \
		CUresult r;                             \
                                                        \
		NEED_CUDA();                            \
		g = gate_begin();                       \
		r = REAL_CU(name, __VA_ARGS__);         \
		gate_end(g);                            \
		return r;                               \
	}

#define LAUNCH_PARAMS                                                      \
	(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,  \
	 unsigned int bx, unsigned int by, unsigned int bz, unsigned int sm, \
	 CUstream s, void **params, void **extra)
GATED(cuLaunchKernel, LAUNCH_PARAMS, f, gx, gy, gz, bx, by, bz, sm, s, params, extra)
GATED(cuLaunchKernel_ptsz, LAUNCH_PARAMS, f, gx, gy, gz, bx, by, bz, sm, s, params,
      extra)

#define EX_PARAMS (const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
GATED(cuLaunchKernelEx, EX_PARAMS, c, f, params, extra)
GATED(cuLaunchKernelEx_ptsz, EX_PARAMS, c, f, params, extra)

#define COOP_PARAMS                                                        \
	(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,  \
	 unsigned int bx, unsigned int by, unsigned int bz, unsigned int sm, \
	 CUstream s, void **params)
GATED(cuLaunchCooperativeKernel, COOP_PARAMS, f, gx, gy, gz, bx, by, bz, sm, s, params)
GATED(cuLaunchCooperativeKernel_ptsz, COOP_PARAMS, f, gx, gy, gz, bx, by, bz, sm, s,
      params)

GATED(cuGraphLaunch, (CUgraphExec e, CUstream s), e, s)
GATED(cuGraphLaunch_ptsz, (CUgraphExec e, CUstream s), e, s)

#define COPY_PARAMS (CUdeviceptr d, CUdeviceptr src, size_t n, CUstream s)
GATED(cuMemcpyAsync, COPY_PARAMS, d, src, n, s)
GATED(cuMemcpyAsync_ptsz, COPY_PARAMS, d, src, n, s)
GATED(cuMemcpyDtoDAsync_v2, COPY_PARAMS, d, src, n, s)
GATED(cuMemcpyDtoDAsync_v2_ptsz, COPY_PARAMS, d, src, n, s)

#define HTOD_PARAMS (CUdeviceptr d, const void *src, size_t n, CUstream s)
GATED(cuMemcpyHtoDAsync_v2, HTOD_PARAMS, d, src, n, s)
GATED(cuMemcpyHtoDAsync_v2_ptsz, HTOD_PARAMS, d, src, n, s)

#define DTOH_PARAMS (void *d, CUdeviceptr src, size_t n, CUstream s)
GATED(cuMemcpyDtoHAsync_v2, DTOH_PARAMS, d, src, n, s)
GATED(cuMemcpyDtoHAsync_v2_ptsz, DTOH_PARAMS, d, src, n, s)

GATED(cuMemsetD8Async, (CUdeviceptr d, unsigned char v, size_t n, CUstream s), d, v, n, s)
GATED(cuMemsetD8Async_ptsz, (CUdeviceptr d, unsigned char v, size_t n, CUstream s), d, v,
      n, s)
GATED(cuMemsetD16Async, (CUdeviceptr d, unsigned short v, size_t n, CUstream s), d, v, n,
      s)
GATED(cuMemsetD16Async_ptsz, (CUdeviceptr d, unsigned short v, size_t n, CUstream s), d,
      v, n, s)
GATED(cuMemsetD32Async, (CUdeviceptr d, unsigned int v, size_t n, CUstream s), d, v, n, s)
GATED(cuMemsetD32Async_ptsz, (CUdeviceptr d, unsigned int v, size_t n, CUstream s), d, v,
      n, s)
