// SPDX-License-Identifier: MIT
/*
 * CUDA graphs of kernel and memory nodes: build (cuGraphCreate,
 * cuGraphAddKernelNode_v2, cuGraphAddMemAllocNode, cuGraphAddMemFreeNode,
 * or cuGraphAddNode and its _v2 for any of the three),
 * instantiate, upload, launch into a stream, destroy. A kernel node's
 * parameters are copied when it is added, as the driver does. A launch
 * queues the kernels in the order their nodes were added, which respects
 * every dependency (a node's dependencies exist before it); independent
 * nodes would run concurrently on a real GPU, but the simulated engine runs
 * one kernel at a time anyway, so the graph takes the sum of its kernels'
 * times, as the same kernels launched one by one do.
 *
 * Graph memory, as CUDA documents it: an allocation node gets its address
 * when it is added, fixed for the node's life; its physical memory is mapped
 * when its executable graph is uploaded or first launched and stays mapped
 * across launches (a graph with memory nodes has one executable graph at a
 * time, so the node's memory is that graph's). A launch makes each
 * allocation live (relaunching while one is live is an error unless the
 * graph auto-frees) and each free node ends one. Memory an executable graph
 * no longer maps (it was destroyed, or trimmed while idle) stays reserved in
 * the device's graph memory pool, for any graph to map, until
 * cuDeviceGraphMemTrim gives it back; an allocation that outlives its graph
 * keeps its memory until it is freed. USED is what graphs map, RESERVED that
 * plus the pool's idle memory (cuDeviceGetGraphMemAttribute). Pages are the
 * 2 MiB ones of cutil/memsize.h. Stream order is not modelled: allocations
 * begin and end at the launch. Stream capture and graph updates are not
 * simulated.
 *
 * Stream capture (cuStreamBeginCapture_v2 to cuStreamEndCapture) turns a
 * stream's kernel launches, cuMemAllocAsync / cuMemAllocFromPoolAsync and
 * cuMemFreeAsync into kernel, allocation and free nodes of a new graph, each
 * depending on the one captured before it, as the driver does for one
 * stream: an allocation gets its address at once and no pages, as
 * cuGraphAddMemAllocNode's. Synchronizing or querying a capturing stream is
 * refused (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED) and invalidates the
 * capture; work the simulator has no node for (copies, memsets, events,
 * graph launches) is refused with CUDA_ERROR_NOT_SUPPORTED and invalidates
 * it too. One stream per capture: no cross-stream capture, capture modes are
 * checked but not enforced.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core.h"

#define GRAPH_MAGIC 0x47525031u
#define EXEC_MAGIC 0x47455831u
/* cuGraphInstantiateWithFlags flags CUDA 12.2 knows (auto free, upload,
 * device launch, node priority). */
#define INSTANTIATE_FLAGS_KNOWN 0xfULL

enum node_kind { NODE_KERNEL, NODE_ALLOC, NODE_FREE };

/* One allocation node's memory; the node, its executable graph and its
 * liveness each hold a reference, as each may outlast the others. */
struct galloc {
	struct galloc *next;
	int phys;
	int mapped, live, refs;
	int in_exec;		/* an executable graph maps it */
	uint64_t exec_end;	/* when that graph's queued work ends */
	uintptr_t addr;
	uint64_t size;		/* whole pages */
};

struct CUgraphNode_st {
	struct CUgraph_st *graph;
	enum node_kind kind;
	uint64_t dur_ns;
	struct galloc *ga;	/* alloc: its memory; free: when of this graph */
	CUdeviceptr dptr;	/* free: what it frees */
	size_t bytes;		/* alloc: as asked */
	int ordinal;		/* alloc: its device */
};

struct CUgraph_st {
	uint32_t magic;
	int has_mem;
	struct CUgraphExec_st *exec;	/* with memory nodes: its one */
	size_t n, cap;
	struct CUgraphNode_st **nodes;
};

struct CUgraphExec_st {
	uint32_t magic;
	unsigned long long flags;
	struct CUgraph_st *graph;	/* with memory nodes, until destroyed */
	size_t n, nk;
	uint64_t *dur_ns;		/* the kernels */
	struct CUgraphNode_st steps[];	/* copies of the nodes */
};

/* Per physical GPU: this process's graph memory pool. */
static struct {
	uint64_t used, idle, used_high, reserved_high;
} gpool[SIM_MAX_GPUS];
static struct galloc *gallocs;
/* Guards gpool, gallocs and the graphs' memory; never held across a call
 * into another part of the simulator that takes its own locks, except the
 * state file's (sim_phys_*). */
static pthread_mutex_t graph_lock = PTHREAD_MUTEX_INITIALIZER;

static void after_fork_child(void)
{
	pthread_mutex_init(&graph_lock, NULL);
	gallocs = NULL;
	for (int i = 0; i < SIM_MAX_GPUS; i++)
		gpool[i].used = gpool[i].idle = gpool[i].used_high =
			gpool[i].reserved_high = 0;
}

__attribute__((constructor)) static void graph_atfork(void)
{
	pthread_atfork(NULL, NULL, after_fork_child);
}

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

static CUresult add_checks(CUgraphNode *phGraphNode, CUgraph hGraph,
			   const CUgraphNode *dependencies,
			   size_t numDependencies)
{
	CUresult r = sim_check_init();

	if (r == CUDA_SUCCESS)
		r = valid_graph(hGraph);
	if (r)
		return r;
	if (!phGraphNode || (numDependencies && !dependencies))
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < numDependencies; i++)
		if (!dependencies[i] || dependencies[i]->graph != hGraph)
			return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

static CUresult add_node(CUgraph g, const struct CUgraphNode_st *proto,
			 CUgraphNode *out)
{
	struct CUgraphNode_st *node, **grown;

	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 8;

		grown = realloc(g->nodes, cap * sizeof(*grown));
		if (!grown)
			return CUDA_ERROR_OUT_OF_MEMORY;
		g->nodes = grown;
		g->cap = cap;
	}
	node = malloc(sizeof(*node));
	if (!node)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*node = *proto;
	node->graph = g;
	g->nodes[g->n++] = node;
	*out = node;
	return CUDA_SUCCESS;
}

SIM_API CUresult cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph,
					 const CUgraphNode *dependencies,
					 size_t numDependencies,
					 const CUDA_KERNEL_NODE_PARAMS_v2 *p)
{
	struct CUgraphNode_st node = { .kind = NODE_KERNEL };
	CUresult r = add_checks(phGraphNode, hGraph, dependencies, numDependencies);

	if (r)
		return r;
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	r = sim_kernel_check(p->func,
			     (const unsigned int[3]){ p->gridDimX, p->gridDimY, p->gridDimZ },
			     (const unsigned int[3]){ p->blockDimX, p->blockDimY, p->blockDimZ },
			     p->kernelParams, p->extra, 0, &node.dur_ns);
	if (r)
		return r;
	return add_node(hGraph, &node, phGraphNode);
}

/* Caller holds graph_lock. The allocation goes when nothing refers to it. */
static void galloc_unref(struct galloc *ga)
{
	if (--ga->refs)
		return;
	for (struct galloc **l = &gallocs; *l; l = &(*l)->next)
		if (*l == ga) {
			*l = ga->next;
			break;
		}
	munmap((void *)ga->addr, ga->size);
	free(ga);
}

/* Caller holds graph_lock. Its pages stay in the device's pool. */
static void unmap_to_pool(struct galloc *ga)
{
	ga->mapped = 0;
	gpool[ga->phys].used -= ga->size;
	gpool[ga->phys].idle += ga->size;
}

static void note_highs(int phys)
{
	uint64_t reserved = gpool[phys].used + gpool[phys].idle;

	if (gpool[phys].used > gpool[phys].used_high)
		gpool[phys].used_high = gpool[phys].used;
	if (reserved > gpool[phys].reserved_high)
		gpool[phys].reserved_high = reserved;
}

/* Caller holds graph_lock. The allocation's lifetime ends; its pages stay
 * mapped while its executable graph lives. */
static void end_life(struct galloc *ga)
{
	ga->live = 0;
	if (ga->mapped && !ga->in_exec)
		unmap_to_pool(ga);
	galloc_unref(ga);
}

SIM_API CUresult cuGraphAddMemAllocNode(CUgraphNode *phGraphNode, CUgraph hGraph,
					const CUgraphNode *dependencies,
					size_t numDependencies,
					CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
	struct CUgraphNode_st node = { .kind = NODE_ALLOC };
	struct galloc *ga;
	void *addr;
	int phys;
	CUresult r = add_checks(phGraphNode, hGraph, dependencies, numDependencies);

	if (r)
		return r;
	if (!p || !p->bytesize ||
	    p->poolProps.allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
	    p->poolProps.location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
	    (p->accessDescCount && !p->accessDescs))
		return CUDA_ERROR_INVALID_VALUE;
	if (sim_device(p->poolProps.location.id, &phys))
		return CUDA_ERROR_INVALID_DEVICE;
	ga = calloc(1, sizeof(*ga));
	if (!ga)
		return CUDA_ERROR_OUT_OF_MEMORY;
	ga->phys = phys;
	ga->size = cgpu_round_page(p->bytesize);
	/* The address only: pages come at upload or launch. */
	addr = mmap(NULL, ga->size, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (addr == MAP_FAILED) {
		free(ga);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	ga->addr = (uintptr_t)addr;
	ga->refs = 1;
	node.ga = ga;
	node.dptr = ga->addr;
	node.bytes = p->bytesize;
	node.ordinal = p->poolProps.location.id;
	r = add_node(hGraph, &node, phGraphNode);
	if (r) {
		munmap(addr, ga->size);
		free(ga);
		return r;
	}
	pthread_mutex_lock(&graph_lock);
	ga->next = gallocs;
	gallocs = ga;
	pthread_mutex_unlock(&graph_lock);
	hGraph->has_mem = 1;
	p->dptr = ga->addr;
	return CUDA_SUCCESS;
}

/* Caller holds graph_lock. */
static struct galloc *find_galloc(CUdeviceptr dptr)
{
	for (struct galloc *ga = gallocs; ga; ga = ga->next)
		if (ga->addr == dptr)
			return ga;
	return NULL;
}

/*
 * A free node frees an allocation of its own graph (made by an earlier node,
 * freed once) or one that outlives another graph; either is a graph
 * allocation.
 */
SIM_API CUresult cuGraphAddMemFreeNode(CUgraphNode *phGraphNode, CUgraph hGraph,
				       const CUgraphNode *dependencies,
				       size_t numDependencies, CUdeviceptr dptr)
{
	struct CUgraphNode_st node = { .kind = NODE_FREE, .dptr = dptr };
	CUresult r = add_checks(phGraphNode, hGraph, dependencies, numDependencies);
	int known;

	if (r)
		return r;
	for (size_t i = 0; i < hGraph->n; i++) {
		struct CUgraphNode_st *o = hGraph->nodes[i];

		if (o->dptr != dptr)
			continue;
		if (o->kind == NODE_FREE)
			return CUDA_ERROR_INVALID_VALUE;
		node.ga = o->ga;
	}
	pthread_mutex_lock(&graph_lock);
	known = find_galloc(dptr) != NULL;
	pthread_mutex_unlock(&graph_lock);
	if (!known)
		return CUDA_ERROR_INVALID_VALUE;
	r = add_node(hGraph, &node, phGraphNode);
	if (r == CUDA_SUCCESS)
		hGraph->has_mem = 1;
	return r;
}

/* The one entry for every node kind (CUDA 12.2): the kinds simulated go
 * where their own entry points go, the rest are not simulated. */
SIM_API CUresult cuGraphAddNode(CUgraphNode *phGraphNode, CUgraph hGraph,
				const CUgraphNode *dependencies,
				size_t numDependencies,
				CUgraphNodeParams *nodeParams)
{
	if (!nodeParams)
		return CUDA_ERROR_INVALID_VALUE;
	switch (nodeParams->type) {
	case CU_GRAPH_NODE_TYPE_KERNEL:
		return cuGraphAddKernelNode_v2(phGraphNode, hGraph, dependencies,
					       numDependencies,
					       &nodeParams->kernel);
	case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
		return cuGraphAddMemAllocNode(phGraphNode, hGraph, dependencies,
					      numDependencies,
					      &nodeParams->alloc);
	case CU_GRAPH_NODE_TYPE_MEM_FREE:
		return cuGraphAddMemFreeNode(phGraphNode, hGraph, dependencies,
					     numDependencies,
					     nodeParams->free.dptr);
	default:
		return CUDA_ERROR_NOT_SUPPORTED;
	}
}

/* CUDA 12.3: edge data per dependency. Only the default edge (all zero, or
 * no data) is simulated: ports and programmatic edges order kernels in ways
 * the one engine does not model. */
SIM_API CUresult cuGraphAddNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph,
				   const CUgraphNode *dependencies,
				   const CUgraphEdgeData *dependencyData,
				   size_t numDependencies,
				   CUgraphNodeParams *nodeParams)
{
	static const CUgraphEdgeData dflt;

	for (size_t i = 0; dependencyData && i < numDependencies; i++)
		if (memcmp(&dependencyData[i], &dflt, sizeof(dflt)))
			return CUDA_ERROR_INVALID_VALUE;
	return cuGraphAddNode(phGraphNode, hGraph, dependencies,
			      numDependencies, nodeParams);
}

static CUresult instantiate(CUgraphExec *phGraphExec, CUgraph hGraph,
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
	/* CUDA: one executable graph at a time for a graph with memory nodes. */
	if (hGraph->has_mem && hGraph->exec)
		return CUDA_ERROR_INVALID_VALUE;
	e = calloc(1, sizeof(*e) + hGraph->n * sizeof(e->steps[0]));
	if (e)
		e->dur_ns = malloc((hGraph->n + 1) * sizeof(e->dur_ns[0]));
	if (!e || !e->dur_ns) {
		free(e);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	e->magic = EXEC_MAGIC;
	e->flags = flags;
	e->n = hGraph->n;
	pthread_mutex_lock(&graph_lock);
	for (size_t i = 0; i < e->n; i++) {
		e->steps[i] = *hGraph->nodes[i];
		if (e->steps[i].kind == NODE_KERNEL)
			e->dur_ns[e->nk++] = e->steps[i].dur_ns;
		if (e->steps[i].kind == NODE_ALLOC) {
			e->steps[i].ga->refs++;
			e->steps[i].ga->in_exec = 1;
		}
	}
	pthread_mutex_unlock(&graph_lock);
	if (hGraph->has_mem) {
		hGraph->exec = e;
		e->graph = hGraph;
	}
	*phGraphExec = e;
	return CUDA_SUCCESS;
}

SIM_API CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec,
					     CUgraph hGraph,
					     unsigned long long flags)
{
	return instantiate(phGraphExec, hGraph, flags);
}

/* Caller holds graph_lock. Maps every allocation of e not mapped yet: pages
 * idle in the device's pool first, then new ones; all or nothing. */
static CUresult map_exec(struct CUgraphExec_st *e)
{
	uint64_t need[SIM_MAX_GPUS] = { 0 }, take[SIM_MAX_GPUS] = { 0 };
	int phys;

	for (size_t i = 0; i < e->n; i++)
		if (e->steps[i].kind == NODE_ALLOC && !e->steps[i].ga->mapped)
			need[e->steps[i].ga->phys] += e->steps[i].ga->size;
	for (phys = 0; phys < SIM_MAX_GPUS; phys++) {
		uint64_t from_pool = need[phys] < gpool[phys].idle ?
					     need[phys] : gpool[phys].idle;

		take[phys] = need[phys] - from_pool;
		if (take[phys] && sim_phys_reserve(phys, take[phys]))
			break;
	}
	if (phys < SIM_MAX_GPUS) {
		while (phys--)
			if (take[phys])
				sim_phys_release(phys, take[phys]);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	for (phys = 0; phys < SIM_MAX_GPUS; phys++) {
		gpool[phys].idle -= need[phys] - take[phys];
		gpool[phys].used += need[phys];
		note_highs(phys);
	}
	for (size_t i = 0; i < e->n; i++)
		if (e->steps[i].kind == NODE_ALLOC)
			e->steps[i].ga->mapped = 1;
	return CUDA_SUCCESS;
}

static CUresult valid_exec(CUgraphExec e)
{
	CUresult r = sim_check_init();

	if (r == CUDA_SUCCESS && (!e || e->magic != EXEC_MAGIC))
		r = CUDA_ERROR_INVALID_VALUE;
	return r;
}

SIM_API CUresult cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream)
{
	uint64_t end;
	CUresult r = valid_exec(hGraphExec);

	if (r == CUDA_SUCCESS)
		r = sim_stream_launch(hStream, NULL, 0, &end);
	if (r)
		return r;
	pthread_mutex_lock(&graph_lock);
	r = map_exec(hGraphExec);
	pthread_mutex_unlock(&graph_lock);
	return r;
}

/* Caller holds graph_lock. Whether a launch of e may begin: its own
 * allocations ended (or auto-freed), the others it frees live. */
static CUresult launch_checks(struct CUgraphExec_st *e)
{
	for (size_t i = 0; i < e->n; i++) {
		struct CUgraphNode_st *s = &e->steps[i];
		struct galloc *ga;

		if (s->kind == NODE_ALLOC && s->ga->live &&
		    !(e->flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH))
			return CUDA_ERROR_INVALID_VALUE;
		if (s->kind == NODE_FREE && !s->ga) {
			ga = find_galloc(s->dptr);
			if (!ga || !ga->live)
				return CUDA_ERROR_INVALID_VALUE;
		}
	}
	return CUDA_SUCCESS;
}

SIM_API CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
	struct CUgraphExec_st *e = hGraphExec;
	uint64_t end;
	CUresult r = valid_exec(e);

	if (r == CUDA_SUCCESS)
		r = sim_stream_launch(hStream, NULL, 0, &end);
	if (r)
		return r;
	pthread_mutex_lock(&graph_lock);
	r = launch_checks(e);
	if (r == CUDA_SUCCESS)
		r = map_exec(e);
	if (r == CUDA_SUCCESS)
		r = sim_stream_launch(hStream, e->dur_ns, e->nk, &end);
	for (size_t i = 0; r == CUDA_SUCCESS && i < e->n; i++) {
		struct CUgraphNode_st *s = &e->steps[i];
		struct galloc *ga = s->kind == NODE_FREE && !s->ga ?
					    find_galloc(s->dptr) :
					    s->ga;

		if (s->kind == NODE_ALLOC) {
			if (ga->live)
				end_life(ga);
			ga->live = 1;
			ga->refs++;
			ga->exec_end = end;
		} else if (s->kind == NODE_FREE && ga->live) {
			end_life(ga);
		}
	}
	pthread_mutex_unlock(&graph_lock);
	return r;
}

SIM_API CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
{
	struct CUgraphExec_st *e = hGraphExec;
	CUresult r = valid_exec(e);

	if (r)
		return r;
	pthread_mutex_lock(&graph_lock);
	for (size_t i = 0; i < e->n; i++) {
		struct galloc *ga = e->steps[i].ga;

		if (e->steps[i].kind != NODE_ALLOC)
			continue;
		ga->in_exec = 0;
		if (ga->mapped && !ga->live)
			unmap_to_pool(ga);
		galloc_unref(ga);
	}
	pthread_mutex_unlock(&graph_lock);
	if (e->graph)
		e->graph->exec = NULL;
	e->magic = 0;
	free(e->dur_ns);
	free(e);
	return CUDA_SUCCESS;
}

/* Graph destruction frees no live allocation (CUDA: it must be freed in
 * another graph or with cuMemFree*). */
SIM_API CUresult cuGraphDestroy(CUgraph hGraph)
{
	CUresult r = sim_check_init();

	if (r == CUDA_SUCCESS)
		r = valid_graph(hGraph);
	if (r)
		return r;
	pthread_mutex_lock(&graph_lock);
	for (size_t i = 0; i < hGraph->n; i++) {
		if (hGraph->nodes[i]->kind == NODE_ALLOC)
			galloc_unref(hGraph->nodes[i]->ga);
		free(hGraph->nodes[i]);
	}
	pthread_mutex_unlock(&graph_lock);
	free(hGraph->nodes);
	if (hGraph->exec)
		hGraph->exec->graph = NULL;
	hGraph->magic = 0;
	free(hGraph);
	return CUDA_SUCCESS;
}

CUresult sim_graph_mem_free(CUdeviceptr dptr)
{
	struct galloc *ga;
	CUresult r = CUDA_ERROR_INVALID_VALUE;

	pthread_mutex_lock(&graph_lock);
	ga = find_galloc(dptr);
	if (ga && ga->live) {
		end_life(ga);
		r = CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&graph_lock);
	return r;
}

/* Caller holds graph_lock. */
static void release_idle(int phys)
{
	sim_phys_release(phys, gpool[phys].idle);
	gpool[phys].idle = 0;
}

/* A context's teardown frees its device's graph memory with it. */
void sim_graph_mem_ctx_gone(int phys)
{
	pthread_mutex_lock(&graph_lock);
	for (struct galloc *ga = gallocs, *next; ga; ga = next) {
		next = ga->next;
		if (ga->phys != phys)
			continue;
		if (ga->mapped)
			unmap_to_pool(ga);
		if (ga->live) {
			ga->live = 0;
			galloc_unref(ga);
		}
	}
	release_idle(phys);
	pthread_mutex_unlock(&graph_lock);
}

/* Memory neither live nor mapped by a graph that is running or queued goes
 * back to the device. */
SIM_API CUresult cuDeviceGraphMemTrim(CUdevice device)
{
	uint64_t now = sim_now_ns();
	int phys;
	CUresult r = sim_device(device, &phys);

	if (r)
		return r;
	pthread_mutex_lock(&graph_lock);
	for (struct galloc *ga = gallocs; ga; ga = ga->next)
		if (ga->phys == phys && ga->mapped && !ga->live &&
		    ga->exec_end <= now)
			unmap_to_pool(ga);
	release_idle(phys);
	pthread_mutex_unlock(&graph_lock);
	return CUDA_SUCCESS;
}

static CUresult graph_mem_attr(CUdevice device, CUgraphMem_attribute attr,
			       void *value, int set)
{
	uint64_t *u = value;
	int phys;
	CUresult r = sim_device(device, &phys);

	if (r)
		return r;
	if (!value || attr > CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH)
		return CUDA_ERROR_INVALID_VALUE;
	/* Only the high watermarks may be written, and only reset to 0. */
	if (set && (*u || attr == CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT ||
		    attr == CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT))
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&graph_lock);
	switch (attr) {
	case CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT:
		*u = gpool[phys].used;
		break;
	case CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT:
		*u = gpool[phys].used + gpool[phys].idle;
		break;
	case CU_GRAPH_MEM_ATTR_USED_MEM_HIGH:
		if (set)
			gpool[phys].used_high = 0;
		else
			*u = gpool[phys].used_high;
		break;
	case CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH:
		if (set)
			gpool[phys].reserved_high = 0;
		else
			*u = gpool[phys].reserved_high;
		break;
	}
	pthread_mutex_unlock(&graph_lock);
	return CUDA_SUCCESS;
}

SIM_API CUresult cuDeviceGetGraphMemAttribute(CUdevice device,
					      CUgraphMem_attribute attr,
					      void *value)
{
	return graph_mem_attr(device, attr, value, 0);
}

SIM_API CUresult cuDeviceSetGraphMemAttribute(CUdevice device,
					      CUgraphMem_attribute attr,
					      void *value)
{
	return graph_mem_attr(device, attr, value, 1);
}

SIM_API CUresult cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes,
				 size_t *numNodes)
{
	CUresult r = sim_check_init();

	if (r == CUDA_SUCCESS)
		r = valid_graph(hGraph);
	if (r)
		return r;
	if (!numNodes)
		return CUDA_ERROR_INVALID_VALUE;
	/* CUDA: as many as fit, the rest of the array NULL, *numNodes the
	 * graph's count. */
	for (size_t i = 0; nodes && i < *numNodes; i++)
		nodes[i] = i < hGraph->n ? hGraph->nodes[i] : NULL;
	*numNodes = hGraph->n;
	return CUDA_SUCCESS;
}

SIM_API CUresult cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType *type)
{
	static const CUgraphNodeType of[] = {
		[NODE_KERNEL] = CU_GRAPH_NODE_TYPE_KERNEL,
		[NODE_ALLOC] = CU_GRAPH_NODE_TYPE_MEM_ALLOC,
		[NODE_FREE] = CU_GRAPH_NODE_TYPE_MEM_FREE,
	};
	CUresult r = sim_check_init();

	if (r)
		return r;
	if (!hNode || !type)
		return CUDA_ERROR_INVALID_VALUE;
	*type = of[hNode->kind];
	return CUDA_SUCCESS;
}

/* What the node was added with, its address included; no access
 * descriptors are kept. */
SIM_API CUresult cuGraphMemAllocNodeGetParams(CUgraphNode hNode,
					      CUDA_MEM_ALLOC_NODE_PARAMS *params_out)
{
	CUresult r = sim_check_init();

	if (r)
		return r;
	if (!hNode || !params_out || hNode->kind != NODE_ALLOC)
		return CUDA_ERROR_INVALID_VALUE;
	*params_out = (CUDA_MEM_ALLOC_NODE_PARAMS){
		.poolProps = { .allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
			       .location = { CU_MEM_LOCATION_TYPE_DEVICE,
					     hNode->ordinal } },
		.bytesize = hNode->bytes,
		.dptr = hNode->dptr,
	};
	return CUDA_SUCCESS;
}

static cuuint64_t capture_ids;

struct sim_capture *sim_capturing(CUstream s)
{
	struct sim_capture *c;

	if (sim_stream_check(s))
		return NULL;
	c = sim_stream_capture(s);
	return c && c->graph ? c : NULL;
}

/* Captured work r made node n, which the next depends on; a failure
 * invalidates the capture, as the driver's do. */
static CUresult chain(struct sim_capture *c, CUresult r, CUgraphNode n)
{
	if (r == CUDA_SUCCESS)
		c->last = n;
	else
		c->invalidated = 1;
	return r;
}

CUresult sim_capture_kernel(struct sim_capture *c, uint64_t dur_ns)
{
	struct CUgraphNode_st node = { .kind = NODE_KERNEL, .dur_ns = dur_ns };
	CUgraphNode n = NULL;
	CUresult r;

	if (c->invalidated)
		return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
	r = add_node(c->graph, &node, &n);
	return chain(c, r, n);
}

CUresult sim_capture_alloc(struct sim_capture *c, size_t bytes,
			   CUdeviceptr *dptr)
{
	CUDA_MEM_ALLOC_NODE_PARAMS p = {
		.poolProps = { .allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
			       .location = { CU_MEM_LOCATION_TYPE_DEVICE,
					     c->ordinal } },
		.bytesize = bytes,
	};
	CUgraphNode n = NULL;
	CUresult r;

	if (c->invalidated)
		return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
	r = cuGraphAddMemAllocNode(&n, c->graph, &c->last, c->last != NULL, &p);
	if (chain(c, r, n) == CUDA_SUCCESS)
		*dptr = p.dptr;
	return r;
}

CUresult sim_capture_free(struct sim_capture *c, CUdeviceptr dptr)
{
	CUgraphNode n = NULL;
	CUresult r;

	if (c->invalidated)
		return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
	r = cuGraphAddMemFreeNode(&n, c->graph, &c->last, c->last != NULL, dptr);
	return chain(c, r, n);
}

CUresult sim_capture_refuse(CUstream s, CUresult why)
{
	struct sim_capture *c = sim_capturing(s);

	if (!c)
		return CUDA_SUCCESS;
	c->invalidated = 1;
	return why;
}

/* The legacy NULL stream cannot be captured; the per-thread one can in
 * CUDA, not in the simulator (one NULL stream per context). */
SIM_API CUresult cuStreamBeginCapture_v2(CUstream hStream,
					 CUstreamCaptureMode mode)
{
	struct sim_capture *c;
	CUcontext ctx;
	CUdevice dev;
	CUgraph g;
	CUresult r = sim_check_init();

	if (r == CUDA_SUCCESS)
		r = sim_stream_check(hStream);
	if (r)
		return r;
	if ((unsigned int)mode > CU_STREAM_CAPTURE_MODE_RELAXED)
		return CUDA_ERROR_INVALID_VALUE;
	c = sim_stream_capture(hStream);
	if (!c)
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	if (c->graph)
		return CUDA_ERROR_ILLEGAL_STATE;
	r = cuStreamGetCtx(hStream, &ctx);
	if (r == CUDA_SUCCESS) {
		dev = ctx->ordinal;
		r = cuGraphCreate(&g, 0);
	}
	if (r)
		return r;
	*c = (struct sim_capture){
		.graph = g,
		.ordinal = dev,
		.id = __atomic_add_fetch(&capture_ids, 1, __ATOMIC_RELAXED),
	};
	return CUDA_SUCCESS;
}

/* An invalidated capture ends without a graph. */
SIM_API CUresult cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
	struct sim_capture *c;
	CUresult r = sim_check_init();

	if (r == CUDA_SUCCESS)
		r = sim_stream_check(hStream);
	if (r)
		return r;
	if (!phGraph)
		return CUDA_ERROR_INVALID_VALUE;
	c = sim_capturing(hStream);
	if (!c)
		return CUDA_ERROR_ILLEGAL_STATE;
	*phGraph = c->invalidated ? NULL : c->graph;
	if (c->invalidated)
		cuGraphDestroy(c->graph);
	r = c->invalidated ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED : CUDA_SUCCESS;
	*c = (struct sim_capture){ 0 };
	return r;
}

SIM_API CUresult cuStreamGetCaptureInfo_v2(CUstream hStream,
					   CUstreamCaptureStatus *captureStatus_out,
					   cuuint64_t *id_out, CUgraph *graph_out,
					   const CUgraphNode **dependencies_out,
					   size_t *numDependencies_out)
{
	struct sim_capture *c;
	CUresult r = sim_check_init();

	if (r == CUDA_SUCCESS)
		r = sim_stream_check(hStream);
	if (r)
		return r;
	if (!captureStatus_out)
		return CUDA_ERROR_INVALID_VALUE;
	c = sim_capturing(hStream);
	*captureStatus_out = !c ? CU_STREAM_CAPTURE_STATUS_NONE :
			     c->invalidated ? CU_STREAM_CAPTURE_STATUS_INVALIDATED :
					      CU_STREAM_CAPTURE_STATUS_ACTIVE;
	if (!c)
		return CUDA_SUCCESS;
	if (id_out)
		*id_out = c->id;
	if (graph_out)
		*graph_out = c->graph;
	if (dependencies_out)
		*dependencies_out = c->last ? &c->last : NULL;
	if (numDependencies_out)
		*numDependencies_out = c->last != NULL;
	return CUDA_SUCCESS;
}

SIM_API CUresult cuStreamIsCapturing(CUstream hStream,
				     CUstreamCaptureStatus *captureStatus)
{
	return cuStreamGetCaptureInfo_v2(hStream, captureStatus, NULL, NULL,
					 NULL, NULL);
}

SIM_API CUresult cuStreamBeginCapture_v2_ptsz(CUstream, CUstreamCaptureMode)
	__attribute__((alias("cuStreamBeginCapture_v2")));
SIM_API CUresult cuStreamEndCapture_ptsz(CUstream, CUgraph *)
	__attribute__((alias("cuStreamEndCapture")));
SIM_API CUresult cuStreamIsCapturing_ptsz(CUstream, CUstreamCaptureStatus *)
	__attribute__((alias("cuStreamIsCapturing")));
SIM_API CUresult cuStreamGetCaptureInfo_v2_ptsz(CUstream, CUstreamCaptureStatus *,
						cuuint64_t *, CUgraph *,
						const CUgraphNode **, size_t *)
	__attribute__((alias("cuStreamGetCaptureInfo_v2")));
SIM_API CUresult cuGraphLaunch_ptsz(CUgraphExec, CUstream)
	__attribute__((alias("cuGraphLaunch")));
SIM_API CUresult cuGraphUpload_ptsz(CUgraphExec, CUstream)
	__attribute__((alias("cuGraphUpload")));
