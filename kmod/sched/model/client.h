/*
 * One container's process: the application (a struct work) behind a model
 * of libcgpu's gate, which is the contract the real hook must follow:
 *  - a launch goes through only while cgs_may_submit() says so, and while
 *    fewer than `depth` of its kernels are in flight: 1024, CUDA's own queue per
 *    stream (the hook adds no cap of its own, so the drain is what was queued);
 *  - not the holder: cgs_pending() once, then sleep until granted (a wakeup
 *    costs wake_ns);
 *  - the holder past its deadline calls cgs_tick() once (the slice may be
 *    renewed), else submits nothing more and, once its kernels completed,
 *    calls cgs_release() with the GPU time they took;
 *  - the holder with nothing in flight and nothing to launch for
 *    yield_ns releases with more = false.
 * A waiter re-asserts cgs_pending() whenever the scheduler's generation
 * moved without granting it (as cgpu_km's wait loop does on each wakeup).
 * A client that hangs freezes for good once it is first granted the GPU
 * (a process stopped while holding): it never submits or calls again.
 */
#ifndef MODEL_CLIENT_H
#define MODEL_CLIENT_H

#include <stdbool.h>
#include <stdint.h>

#include "../cgs.h"
#include "gpu.h"
#include "stats.h"
#include "work.h"

struct hook_cfg {
	uint32_t depth;		/* kernels in flight at most */
	uint64_t yield_ns;	/* idle holder gives the GPU back after this */
	uint64_t wake_ns;	/* a sleeping process runs again after this */
	uint64_t launch_ns;	/* host time one launch takes */
};

extern const struct hook_cfg hook_default;

struct client {
	int id;			/* scheduler slot and GPU context */
	struct work w;
	struct hook_cfg cfg;
	bool gated;		/* behind the scheduler; else the bare application */
	bool hangs;		/* freezes when first granted */
	bool frozen;

	struct op op;
	bool have_op;
	uint64_t cpu_until;
	uint64_t req_start;
	bool in_req;

	bool waiting;		/* pending sent, not granted yet */
	bool waking;
	uint64_t wait_from, wake_at;
	uint64_t pend_gen;	/* scheduler generation at the last cgs_pending() */
	bool holding;
	uint64_t used_from;	/* GPU busy time of this context at the grant */
	uint64_t ticked;	/* deadline the slow path already ran for */
	uint64_t idle_since;	/* holding with nothing to do since; 0: not idle */

	uint64_t images;
	struct samples latency;	/* per request: arrival to completion */
	struct samples wait;	/* per gate wait: first blocked launch to grant */
};

void client_init(struct client *c, int id, struct work w, bool gated);
/* Runs the client at `now` as far as it goes; true if anything happened. */
bool client_step(struct client *c, struct cgs *s, struct gpu *g, uint64_t now);
/* The next time the client acts on its own (not woken by others). */
uint64_t client_next(const struct client *c, const struct cgs *s, uint64_t now);

#endif
