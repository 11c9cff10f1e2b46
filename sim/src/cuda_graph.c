// SPDX-License-Identifier: MIT
/*
 * CUDA graphs of kernel nodes: build (cuGraphCreate, cuGraphAddKernelNode_v2),
 * instantiate, launch into a stream, destroy. A kernel node's parameters are
 * copied when it is added, as the driver does. A launch queues the nodes in
 * the order they were added, which respects every dependency (a node's
 * dependencies exist before it); independent nodes would run concurrently on
 * a real GPU, but the simulated engine runs one kernel at a time anyway, so
 * the graph takes the sum of its kernels' times, as the same kernels launched
 * one by one do. Other node kinds, stream capture and graph updates are not
 * simulated.
 */
#include <stdlib.h>

#include "core.h"

#define GRAPH_MAGIC 0x47525031u
#define EXEC_MAGIC 0x47455831u
/* cuGraphInstantiateWithFlags flags CUDA 12.2 knows (auto free, upload,
 * device launch, node priority). */
#define INSTANTIATE_FLAGS_KNOWN 0xfULL

struct CUgraphNode_st {
	struct CUgraph_st *graph;
	uint64_t dur_ns;
};

struct CUgraph_st {
	uint32_t magic;
	size_t n, cap;
	struct CUgraphNode_st **nodes;
};

struct CUgraphExec_st {
	uint32_t magic;
	size_t n;
	uint64_t dur_ns[];
};

SIM_API CUresult cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
	CUresult r = sim_check_init();
	struct CUgraph_st *g;

	if (r)
		return r;
	if (!phGraph || flags)
		return CUDA_ERROR_INVALID_VALUE;
	g = calloc(1, sizeof(*g));
	if (!g)
		return CUDA_ERROR_OUT_OF_MEMORY;
	g->magic = GRAPH_MAGIC;
	*phGraph = g;
	return CUDA_SUCCESS;
}

static CUresult valid_graph(CUgraph g)
{
	return g && g->magic == GRAPH_MAGIC ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

SIM_API CUresult cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph,
					 const CUgraphNode *dependencies,
					 size_t numDependencies,
					 const CUDA_KERNEL_NODE_PARAMS_v2 *p)
{
	struct CUgraphNode_st *node, **grown;
	CUresult r = sim_check_init();
	uint64_t dur;

	if (r == CUDA_SUCCESS)
		r = valid_graph(hGraph);
	if (r)
		return r;
	if (!phGraphNode || !p || (numDependencies && !dependencies))
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < numDependencies; i++)
		if (!dependencies[i] || dependencies[i]->graph != hGraph)
			return CUDA_ERROR_INVALID_VALUE;
	r = sim_kernel_check(p->func,
			     (const unsigned int[3]){ p->gridDimX, p->gridDimY, p->gridDimZ },
			     (const unsigned int[3]){ p->blockDimX, p->blockDimY, p->blockDimZ },
			     p->kernelParams, p->extra, 0, &dur);
	if (r)
		return r;
	if (hGraph->n == hGraph->cap) {
		size_t cap = hGraph->cap ? 2 * hGraph->cap : 8;

		grown = realloc(hGraph->nodes, cap * sizeof(*grown));
		if (!grown)
			return CUDA_ERROR_OUT_OF_MEMORY;
		hGraph->nodes = grown;
		hGraph->cap = cap;
	}
	node = malloc(sizeof(*node));
	if (!node)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*node = (struct CUgraphNode_st){ hGraph, dur };
	hGraph->nodes[hGraph->n++] = node;
	*phGraphNode = node;
	return CUDA_SUCCESS;
}

SIM_API CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec,
					     CUgraph hGraph,
					     unsigned long long flags)
{
	CUresult r = sim_check_init();
	struct CUgraphExec_st *e;

	if (r == CUDA_SUCCESS)
		r = valid_graph(hGraph);
	if (r)
		return r;
	if (!phGraphExec || (flags & ~INSTANTIATE_FLAGS_KNOWN))
		return CUDA_ERROR_INVALID_VALUE;
	e = malloc(sizeof(*e) + hGraph->n * sizeof(e->dur_ns[0]));
	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	e->magic = EXEC_MAGIC;
	e->n = hGraph->n;
	for (size_t i = 0; i < e->n; i++)
		e->dur_ns[i] = hGraph->nodes[i]->dur_ns;
	*phGraphExec = e;
	return CUDA_SUCCESS;
}

SIM_API CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
	CUresult r = sim_check_init();

	if (r)
		return r;
	if (!hGraphExec || hGraphExec->magic != EXEC_MAGIC)
		return CUDA_ERROR_INVALID_VALUE;
	return sim_stream_launch(hStream, hGraphExec->dur_ns, hGraphExec->n);
}

SIM_API CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
{
	CUresult r = sim_check_init();

	if (r)
		return r;
	if (!hGraphExec || hGraphExec->magic != EXEC_MAGIC)
		return CUDA_ERROR_INVALID_VALUE;
	hGraphExec->magic = 0;
	free(hGraphExec);
	return CUDA_SUCCESS;
}

SIM_API CUresult cuGraphDestroy(CUgraph hGraph)
{
	CUresult r = sim_check_init();

	if (r == CUDA_SUCCESS)
		r = valid_graph(hGraph);
	if (r)
		return r;
	for (size_t i = 0; i < hGraph->n; i++)
		free(hGraph->nodes[i]);
	free(hGraph->nodes);
	hGraph->magic = 0;
	free(hGraph);
	return CUDA_SUCCESS;
}

SIM_API CUresult cuGraphLaunch_ptsz(CUgraphExec, CUstream)
	__attribute__((alias("cuGraphLaunch")));
