// SPDX-License-Identifier: MIT
/*
 * Graph memory (allocation nodes: cuGraphAddMemAllocNode, cuGraphAddNode and
 * its _v2 with CU_GRAPH_NODE_TYPE_MEM_ALLOC, and what a stream capture makes
 * of cuMemAllocAsync) is charged for what the driver's graph
 * memory pool reserves on each device, CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT.
 * The driver maps an executable graph's allocations when the graph is
 * uploaded or first launched (or instantiated with
 * CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD) and keeps the pages across launches,
 * then in its pool, until cuDeviceGraphMemTrim or the context goes.
 *
 * Before such a call the graph's allocations not mapped yet (their sizes in
 * 2 MiB pages), less what the pool holds idle, are charged; a budget that
 * cannot take them refuses the call (CUDA_ERROR_OUT_OF_MEMORY) before the
 * driver is asked. Afterwards the
 * charge is set to what the pool reserves ("reconcile"), and again after
 * trims, destroys and context teardown. A graph with memory nodes has one
 * executable graph at a time (CUDA's rule), so the exec's allocations are
 * its graph's.
 *
 * Sizes are learnt as the hooks add nodes; a graph can also get allocation
 * nodes the hooks never see (stream capture of cuMemAllocAsync,
 * cuGraphClone, cuStreamBeginCaptureToGraph), so before every instantiation
 * the graph's nodes are listed (cuGraphGetNodes) and each allocation node
 * not seen is asked its size (cuGraphMemAllocNodeGetParams) and recorded as
 * if added: the charge still comes before the driver maps it.
 */
#include <stdlib.h>

#include "budget.h"
#include "devmap.h"
#include "memsize.h"
#include "track.h"

#define MAX_DEV 64

/* Allocation bytes a graph (exec NULL) or an executable graph has on dev. */
struct gmem {
	CUgraph graph;
	CUgraphExec exec;
	CUdevice dev;
	int mapped;		/* as far as we know, the driver mapped it */
	uint64_t bytes;
};

/* An allocation node whose size its graph's record holds. */
struct seen {
	CUgraph graph;
	CUgraphNode node;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct gmem *recs;	/* realloc'd: no pointer outlives lock */
static int nrecs, cap;
static struct seen *seen;	/* as recs */
static int nseen, seen_cap;
static uint64_t charged[MAX_DEV], inflight[MAX_DEV];
static int said_full;

void graph_fork(enum track_fork_phase phase)
{
	if (!track_fork_lock(phase, &lock))
		return;
	nrecs = nseen = 0;
	for (int i = 0; i < MAX_DEV; i++)
		charged[i] = inflight[i] = 0;
}

/* Caller holds lock. NULL when there is no memory to record another. */
static struct gmem *get(CUgraph g, CUgraphExec e, CUdevice dev)
{
	for (int i = 0; i < nrecs; i++)
		if (recs[i].graph == g && recs[i].exec == e && recs[i].dev == dev)
			return &recs[i];
	if (nrecs == cap) {
		int n = cap ? 2 * cap : 16;
		struct gmem *grown = realloc(recs, (size_t)n * sizeof(*recs));

		if (!grown)
			return NULL;
		recs = grown;
		cap = n;
	}
	recs[nrecs] = (struct gmem){ .graph = g, .exec = e, .dev = dev };
	return &recs[nrecs++];
}

/* Caller holds lock. Drops the records of graph g (exec NULL) or of exec e. */
static void drop(CUgraph g, CUgraphExec e)
{
	for (int i = 0; i < nrecs;)
		if (e ? recs[i].exec == e : !recs[i].exec && recs[i].graph == g)
			recs[i] = recs[--nrecs];
		else
			i++;
	for (int i = 0; !e && i < nseen;)
		if (seen[i].graph == g)
			seen[i] = seen[--nseen];
		else
			i++;
}

/* Caller holds lock. */
static int was_seen(CUgraph g, CUgraphNode n)
{
	for (int i = 0; i < nseen; i++)
		if (seen[i].graph == g && seen[i].node == n)
			return 1;
	return 0;
}

/* Caller holds lock. Node n's size joins g's record on dev. -1 when there
 * is no memory to record it. */
static int record(CUgraph g, CUgraphNode n, CUdevice dev, size_t bytes)
{
	struct gmem *rec = get(g, NULL, dev);

	if (rec && nseen == seen_cap) {
		int c = seen_cap ? 2 * seen_cap : 16;
		struct seen *grown = realloc(seen, (size_t)c * sizeof(*seen));

		if (!grown)
			return -1;
		seen = grown;
		seen_cap = c;
	}
	if (!rec)
		return -1;
	rec->bytes += cgpu_round_page(bytes);
	seen[nseen++] = (struct seen){ g, n };
	return 0;
}

static uint64_t attr(CUdevice dev, CUgraphMem_attribute a)
{
	cuuint64_t v = 0;

	REAL_CU(cuDeviceGetGraphMemAttribute, dev, a, &v);
	return v;
}

/* Sets dev's charge to what its graph pool reserves (plus estimates of
 * calls in progress). 0, or -1 when the budget cannot take the growth. */
static int reconcile(CUdevice dev)
{
	uint64_t want = attr(dev, CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT);
	int slot = devmap_cuda(dev), err = 0;

	if (slot < 0)
		return 0;
	pthread_mutex_lock(&lock);
	want += inflight[dev];
	if (want > charged[dev]) {
		if (ledger_charge(slot, want - charged[dev]))
			err = -1;
		else
			charged[dev] = want;
	} else if (want < charged[dev]) {
		ledger_uncharge(slot, charged[dev] - want);
		charged[dev] = want;
	}
	pthread_mutex_unlock(&lock);
	return err;
}

/* A call that may map the allocations of graph g (e NULL) or exec e. */
struct mapping {
	CUgraph g;
	CUgraphExec e;
	uint64_t pre[MAX_DEV];	/* charged beforehand */
	uint64_t need[MAX_DEV];	/* not mapped yet */
};

/* Caller holds lock. */
static int is_of(const struct gmem *r, const struct mapping *m)
{
	return m->e ? r->exec == m->e : !r->exec && r->graph == m->g;
}

/* Charges what the call may map beyond the pool's idle memory:
 * CUDA_ERROR_OUT_OF_MEMORY (nothing charged) when the budget refuses. */
static CUresult map_begin(struct mapping *m)
{
	CUresult r = CUDA_SUCCESS;
	int dev;

	pthread_mutex_lock(&lock);
	for (int i = 0; i < nrecs; i++)
		if (is_of(&recs[i], m) && !recs[i].mapped)
			m->need[recs[i].dev] += recs[i].bytes;
	pthread_mutex_unlock(&lock);
	for (dev = 0; dev < MAX_DEV && r == CUDA_SUCCESS; dev++) {
		uint64_t idle;

		if (!m->need[dev])
			continue;
		idle = attr(dev, CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT) -
		       attr(dev, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT);
		pthread_mutex_lock(&lock);
		idle = idle > inflight[dev] ? idle - inflight[dev] : 0;
		m->pre[dev] = m->need[dev] > idle ? m->need[dev] - idle : 0;
		r = m->pre[dev] ? track_charge(devmap_cuda(dev), m->pre[dev]) :
				  CUDA_SUCCESS;
		if (r == CUDA_SUCCESS) {
			charged[dev] += m->pre[dev];
			inflight[dev] += m->pre[dev];
		} else {
			m->pre[dev] = 0;
		}
		pthread_mutex_unlock(&lock);
	}
	if (r != CUDA_SUCCESS) {
		while (dev--) {
			pthread_mutex_lock(&lock);
			inflight[dev] -= m->pre[dev];
			pthread_mutex_unlock(&lock);
			reconcile(dev);
		}
	}
	return r;
}

/* After the call (result r): the charge follows the pools. A driver that
 * took more than the estimate and the budget refuses is left to trim what
 * it can, and the call reports CUDA_ERROR_OUT_OF_MEMORY. */
static CUresult map_end(struct mapping *m, CUresult r, CUstream s)
{
	int over = 0;

	pthread_mutex_lock(&lock);
	for (int dev = 0; dev < MAX_DEV; dev++)
		inflight[dev] -= m->pre[dev];
	for (int i = 0; r == CUDA_SUCCESS && i < nrecs; i++)
		if (is_of(&recs[i], m))
			recs[i].mapped = 1;
	pthread_mutex_unlock(&lock);
	for (int dev = 0; dev < MAX_DEV; dev++)
		if (m->need[dev] && reconcile(dev))
			over = 1;
	if (over && r == CUDA_SUCCESS) {
		REAL_CU(cuStreamSynchronize, s);
		for (int dev = 0; dev < MAX_DEV; dev++)
			if (m->need[dev]) {
				REAL_CU(cuDeviceGraphMemTrim, dev);
				reconcile(dev);
			}
		r = CUDA_ERROR_OUT_OF_MEMORY;
	}
	return r;
}

static CUresult mapped_call(CUgraph g, CUgraphExec e, CUstream s,
			    CUresult (*fn)(CUgraphExec, CUstream))
{
	struct mapping m = { .g = g, .e = e };
	CUresult r;

	if (!fn)
		return CUDA_ERROR_NOT_SUPPORTED;
	/* No graph with memory nodes (most): a launch takes no lock. */
	if (cgpu_mode == CGPU_OFF || !__atomic_load_n(&nrecs, __ATOMIC_RELAXED))
		return fn(e, s);
	r = map_begin(&m);
	if (r == CUDA_SUCCESS)
		r = map_end(&m, fn(e, s), s);
	return r;
}

/* hook_launch.c: cuGraphLaunch inside the compute gate. */
CUresult cgpu_graph_launch(CUresult (*fn)(CUgraphExec, CUstream), CUgraphExec e,
			   CUstream s)
{
	return mapped_call(NULL, e, s, fn);
}

CGPU_EXPORT CUresult cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream)
{
	NEED_CUDA();
	return mapped_call(NULL, hGraphExec, hStream, real_cuGraphUpload);
}

CGPU_EXPORT CUresult cuGraphUpload_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
	NEED_CUDA();
	return mapped_call(NULL, hGraphExec, hStream, real_cuGraphUpload_ptsz);
}

/* An allocation node on a device is recorded before the driver adds it: a
 * node libcgpu has no memory to record is refused, never left uncharged. *dev
 * is the device whose record waits for the node's size, or -1 when the node
 * is left to the driver (another node kind, another location, cgpu off). */
static CUresult alloc_node_begin(CUgraph g, const CUDA_MEM_ALLOC_NODE_PARAMS *p,
				 CUdevice *dev)
{
	struct gmem *rec;

	*dev = -1;
	if (cgpu_mode == CGPU_OFF || !p ||
	    p->poolProps.location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
	    p->poolProps.location.id < 0 || p->poolProps.location.id >= MAX_DEV)
		return CUDA_SUCCESS;
	pthread_mutex_lock(&lock);
	rec = get(g, NULL, p->poolProps.location.id);
	pthread_mutex_unlock(&lock);
	if (!rec) {
		cgpu_say_once(&said_full,
			      "cgpu: no memory to record another graph's memory; its allocation nodes are refused");
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*dev = p->poolProps.location.id;
	return CUDA_SUCCESS;
}

/* The driver's answer r to adding node *n: its pages join the record. */
static CUresult alloc_node_end(CUresult r, CUgraph g, CUdevice dev,
			       const CUDA_MEM_ALLOC_NODE_PARAMS *p,
			       const CUgraphNode *n)
{
	if (r != CUDA_SUCCESS || dev < 0)
		return r;
	pthread_mutex_lock(&lock);
	/* A node there is no memory to record is asked its size again at
	 * instantiation. */
	record(g, *n, dev, p->bytesize);
	pthread_mutex_unlock(&lock);
	return r;
}

CGPU_EXPORT CUresult cuGraphAddMemAllocNode(CUgraphNode *phGraphNode,
					    CUgraph hGraph,
					    const CUgraphNode *dependencies,
					    size_t numDependencies,
					    CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
	CUdevice dev;
	CUresult r;

	NEED_CUDA();
	r = alloc_node_begin(hGraph, p, &dev);
	if (r == CUDA_SUCCESS)
		r = alloc_node_end(REAL_CU(cuGraphAddMemAllocNode, phGraphNode,
					   hGraph, dependencies,
					   numDependencies, p),
				   hGraph, dev, p, phGraphNode);
	return r;
}

/* cuGraphAddNode (CUDA 12.2) and its _v2 add any kind of node, an allocation
 * node too (the CUDA runtime's cudaGraphAddNode comes here). */
static CUDA_MEM_ALLOC_NODE_PARAMS *alloc_of(CUgraphNodeParams *np)
{
	return np && np->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC ? &np->alloc : NULL;
}

CGPU_EXPORT CUresult cuGraphAddNode(CUgraphNode *phGraphNode, CUgraph hGraph,
				    const CUgraphNode *dependencies,
				    size_t numDependencies,
				    CUgraphNodeParams *nodeParams)
{
	CUDA_MEM_ALLOC_NODE_PARAMS *p = alloc_of(nodeParams);
	CUdevice dev;
	CUresult r;

	NEED_CUDA();
	r = alloc_node_begin(hGraph, p, &dev);
	if (r == CUDA_SUCCESS)
		r = alloc_node_end(REAL_CU(cuGraphAddNode, phGraphNode, hGraph,
					   dependencies, numDependencies,
					   nodeParams),
				   hGraph, dev, p, phGraphNode);
	return r;
}

CGPU_EXPORT CUresult cuGraphAddNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph,
				       const CUgraphNode *dependencies,
				       const CUgraphEdgeData *dependencyData,
				       size_t numDependencies,
				       CUgraphNodeParams *nodeParams)
{
	CUDA_MEM_ALLOC_NODE_PARAMS *p = alloc_of(nodeParams);
	CUdevice dev;
	CUresult r;

	NEED_CUDA();
	r = alloc_node_begin(hGraph, p, &dev);
	if (r == CUDA_SUCCESS)
		r = alloc_node_end(REAL_CU(cuGraphAddNode_v2, phGraphNode, hGraph,
					   dependencies, dependencyData,
					   numDependencies, nodeParams),
				   hGraph, dev, p, phGraphNode);
	return r;
}

/* The allocation nodes of g the hooks did not see added are recorded as if
 * they were; the driver answers for them. CUDA_ERROR_OUT_OF_MEMORY when
 * there is no memory to record them (nothing is instantiated then). */
static CUresult learn(CUgraph g)
{
	CUgraphNode *nodes = NULL;
	size_t n = 0, room;
	int ok = 1;

	if (cgpu_mode == CGPU_OFF ||
	    REAL_CU(cuGraphGetNodes, g, NULL, &n) != CUDA_SUCCESS || !n)
		return CUDA_SUCCESS;
	room = n;
	nodes = malloc(room * sizeof(*nodes));
	if (!nodes || REAL_CU(cuGraphGetNodes, g, nodes, &n) != CUDA_SUCCESS)
		ok = 0;
	/* The count is the graph's, which another thread may have grown. */
	for (size_t i = 0; ok && i < n && i < room; i++) {
		CUDA_MEM_ALLOC_NODE_PARAMS p;
		CUgraphNodeType t;

		if (!nodes[i] ||
		    REAL_CU(cuGraphNodeGetType, nodes[i], &t) != CUDA_SUCCESS ||
		    t != CU_GRAPH_NODE_TYPE_MEM_ALLOC ||
		    REAL_CU(cuGraphMemAllocNodeGetParams, nodes[i], &p) !=
			    CUDA_SUCCESS ||
		    p.poolProps.location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
		    p.poolProps.location.id < 0 || p.poolProps.location.id >= MAX_DEV)
			continue;
		/* Seen and recorded under one lock: two instantiations of g
		 * at once record a node once. */
		pthread_mutex_lock(&lock);
		if (!was_seen(g, nodes[i]))
			ok = !record(g, nodes[i], p.poolProps.location.id,
				     p.bytesize);
		pthread_mutex_unlock(&lock);
	}
	free(nodes);
	if (ok)
		return CUDA_SUCCESS;
	cgpu_say_once(&said_full,
		      "cgpu: no memory to record another graph's memory; its allocation nodes are refused");
	return CUDA_ERROR_OUT_OF_MEMORY;
}

/* An executable graph takes its graph's records; without memory for them
 * it is destroyed and refused. */
static CUresult instantiated(CUresult r, CUgraphExec *pe, CUgraph g)
{
	int ok = 1;

	if (r != CUDA_SUCCESS || cgpu_mode == CGPU_OFF)
		return r;
	pthread_mutex_lock(&lock);
	for (int i = 0; ok && i < nrecs; i++)
		if (!recs[i].exec && recs[i].graph == g) {
			struct gmem copy = recs[i];
			struct gmem *rec = get(g, *pe, copy.dev);

			if (rec)
				rec->bytes = copy.bytes;
			ok = rec != NULL;
		}
	if (!ok)
		drop(NULL, *pe);
	pthread_mutex_unlock(&lock);
	if (ok)
		return r;
	REAL_CU(cuGraphExecDestroy, *pe);
	cgpu_say_once(&said_full,
		      "cgpu: no memory to record another graph's memory; its allocation nodes are refused");
	return CUDA_ERROR_OUT_OF_MEMORY;
}

CGPU_EXPORT CUresult cuGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph,
					CUgraphNode *phErrorNode, char *logBuffer,
					size_t bufferSize)
{
	CUresult r;

	NEED_CUDA();
	r = learn(hGraph);
	return r ? r : instantiated(REAL_CU(cuGraphInstantiate, phGraphExec, hGraph,
					    phErrorNode, logBuffer, bufferSize),
				    phGraphExec, hGraph);
}

CGPU_EXPORT CUresult cuGraphInstantiate_v2(CUgraphExec *phGraphExec,
					   CUgraph hGraph,
					   CUgraphNode *phErrorNode,
					   char *logBuffer, size_t bufferSize)
{
	CUresult r;

	NEED_CUDA();
	r = learn(hGraph);
	return r ? r : instantiated(REAL_CU(cuGraphInstantiate_v2, phGraphExec,
					    hGraph, phErrorNode, logBuffer,
					    bufferSize),
				    phGraphExec, hGraph);
}

CGPU_EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec,
						 CUgraph hGraph,
						 unsigned long long flags)
{
	CUresult r;

	NEED_CUDA();
	r = learn(hGraph);
	return r ? r : instantiated(REAL_CU(cuGraphInstantiateWithFlags,
					    phGraphExec, hGraph, flags),
				    phGraphExec, hGraph);
}

/* With CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD the driver maps at once: charged
 * as an upload of the graph's allocations. */
static CUresult with_params(CUresult (*fn)(CUgraphExec *, CUgraph,
					   CUDA_GRAPH_INSTANTIATE_PARAMS *),
			    CUgraphExec *pe, CUgraph g,
			    CUDA_GRAPH_INSTANTIATE_PARAMS *params)
{
	struct mapping m = { .g = g };
	CUresult r;

	if (!fn)
		return CUDA_ERROR_NOT_SUPPORTED;
	r = learn(g);
	if (r != CUDA_SUCCESS)
		return r;
	if (cgpu_mode == CGPU_OFF || !params ||
	    !(params->flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD))
		return instantiated(fn(pe, g, params), pe, g);
	r = map_begin(&m);
	if (r != CUDA_SUCCESS)
		return r;
	r = instantiated(fn(pe, g, params), pe, g);
	if (r == CUDA_SUCCESS)
		m.e = *pe;
	return map_end(&m, r, params->hUploadStream);
}

CGPU_EXPORT CUresult cuGraphInstantiateWithParams(CUgraphExec *phGraphExec,
						  CUgraph hGraph,
						  CUDA_GRAPH_INSTANTIATE_PARAMS *params)
{
	NEED_CUDA();
	return with_params(real_cuGraphInstantiateWithParams, phGraphExec, hGraph,
			   params);
}

CGPU_EXPORT CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec *phGraphExec,
						       CUgraph hGraph,
						       CUDA_GRAPH_INSTANTIATE_PARAMS *params)
{
	NEED_CUDA();
	return with_params(real_cuGraphInstantiateWithParams_ptsz, phGraphExec,
			   hGraph, params);
}

/* Its pages go to the device's pool, still reserved: the charge follows. */
CGPU_EXPORT CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
{
	struct mapping m = { .e = hGraphExec };
	CUresult r;

	NEED_CUDA();
	r = REAL_CU(cuGraphExecDestroy, hGraphExec);
	if (r != CUDA_SUCCESS || cgpu_mode == CGPU_OFF)
		return r;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < nrecs; i++)
		if (is_of(&recs[i], &m))
			m.need[recs[i].dev] = 1;
	drop(NULL, hGraphExec);
	pthread_mutex_unlock(&lock);
	for (int dev = 0; dev < MAX_DEV; dev++)
		if (m.need[dev])
			reconcile(dev);
	return r;
}

/* Live allocations outlive their graph (CUDA frees none with it); the
 * graph's records go, its executable graph keeps its own. */
CGPU_EXPORT CUresult cuGraphDestroy(CUgraph hGraph)
{
	CUresult r;

	NEED_CUDA();
	r = REAL_CU(cuGraphDestroy, hGraph);
	if (r == CUDA_SUCCESS && cgpu_mode != CGPU_OFF) {
		pthread_mutex_lock(&lock);
		drop(hGraph, NULL);
		pthread_mutex_unlock(&lock);
	}
	return r;
}

/* Device dev's graph memory was unmapped (dev < 0: every device's): what
 * executable graphs map is remapped, and charged again, at their next
 * launch. */
static void unmapped(CUdevice dev)
{
	pthread_mutex_lock(&lock);
	for (int i = 0; i < nrecs; i++)
		if (dev < 0 || recs[i].dev == dev)
			recs[i].mapped = 0;
	pthread_mutex_unlock(&lock);
	for (int d = 0; d < MAX_DEV; d++)
		if ((dev < 0 && __atomic_load_n(&charged[d], __ATOMIC_RELAXED)) ||
		    d == dev)
			reconcile(d);
}

void graph_ctx_gone(void)
{
	if (cgpu_mode != CGPU_OFF)
		unmapped(-1);
}

/* The trim may unmap idle executable graphs' pages too. */
CGPU_EXPORT CUresult cuDeviceGraphMemTrim(CUdevice device)
{
	CUresult r;

	NEED_CUDA();
	r = REAL_CU(cuDeviceGraphMemTrim, device);
	if (r == CUDA_SUCCESS && cgpu_mode != CGPU_OFF && device >= 0 &&
	    device < MAX_DEV)
		unmapped(device);
	return r;
}
