/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A user address space for lib/rm.c in user space: addresses UBASE..UBASE+USIZE map
 * to umem[], every other one faults, as copy_from_user would. The lock checks that no
 * user copy happens under it and that it never nests.
 */
#ifndef SIMDRV_HARNESS_H
#define SIMDRV_HARNESS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../lib/rm.h"
#include "../lib/vaspace.h"

#define UBASE	0x7f0000001000ULL
#define USIZE	65536u

static unsigned char umem[USIZE];
static int locked;
static unsigned int gpu_open_mask;	/* bit i: the caller holds /dev/nvidia<i> open */
static long live_allocs;
static int fail_alloc_after = -1;	/* >= 0: that many allocations succeed, then they fail */

#define REQUIRE(c) do { if (!(c)) { fprintf(stderr, "%s:%d: violated: %s\n", __FILE__, __LINE__, #c); abort(); } } while (0)

void *sd_zalloc(unsigned long size)
{
	void *p;

	if (fail_alloc_after == 0)
		return NULL;
	if (fail_alloc_after > 0)
		fail_alloc_after--;
	p = calloc(1, size);
	if (p)
		live_allocs++;
	return p;
}

void sd_free(void *p)
{
	if (p)
		live_allocs--;
	free(p);
}

static int in_user(sd_u64 a, sd_u32 len)
{
	return a >= UBASE && a - UBASE <= USIZE && len <= USIZE - (a - UBASE);
}

static int h_copy_in(void *ctx, void *dst, sd_u64 a, sd_u32 len)
{
	(void)ctx;
	REQUIRE(!locked);
	if (!in_user(a, len))
		return -1;
	memcpy(dst, umem + (a - UBASE), len);
	return 0;
}

static int h_copy_out(void *ctx, sd_u64 a, const void *src, sd_u32 len)
{
	(void)ctx;
	REQUIRE(!locked);
	if (!in_user(a, len))
		return -1;
	memcpy(umem + (a - UBASE), src, len);
	return 0;
}

static int h_gpu_open(void *ctx, sd_u32 gpu)
{
	(void)ctx;
	REQUIRE(!locked);
	return gpu < 32 && (gpu_open_mask >> gpu) & 1;
}

/* The caller's descriptors NV_ESC_REGISTER_FD can name: fd i is fd_files[i]. */
#define NFDS 8
static struct sd_file *fd_files[NFDS];
static int ctl_refs;		/* references ctl_get handed out and not yet put */

static struct sd_file *h_ctl_get(void *ctx, int fd, void **ref)
{
	(void)ctx;
	REQUIRE(!locked);
	if (fd < 0 || fd >= NFDS || !fd_files[fd] || fd_files[fd]->minor != SD_CTL_MINOR)
		return 0;
	ctl_refs++;
	*ref = fd_files[fd];
	return fd_files[fd];
}

static void h_ctl_put(void *ctx, void *ref)
{
	(void)ctx;
	REQUIRE(ref && ctl_refs > 0);
	ctl_refs--;
}

static sd_u32 caller_pid = 1000;	/* the process the entry calls come from */

static sd_u32 h_caller(void *ctx)
{
	(void)ctx;
	return caller_pid;
}

static void h_lock(void *ctx)
{
	(void)ctx;
	REQUIRE(!locked);
	locked = 1;
}

static void h_unlock(void *ctx)
{
	(void)ctx;
	REQUIRE(locked);
	locked = 0;
}

static const struct sd_env henv;

/* RM's escapes straight to the core, as the module's rm_ioctl does. */
static enum sd_rc h_rm_ioctl(void *ctx, struct sd_file *f, sd_u32 nr, void *arg, sd_u32 size)
{
	(void)ctx;
	REQUIRE(!locked);
	return sd_rm_ioctl(f, &henv, nr, arg, size);
}

/* The dma-bufs made and not yet released: descriptor i holds driver client bufs[i]. */
#define NBUFS 8
static sd_u32 bufs[NBUFS];

/* The module's nv_dma_buf_export, with a table standing in for the dma-buf and its fd. */
static sd_u32 h_dmabuf_export(void *ctx, struct sd_file *f, struct sd_export_dmabuf *p)
{
	sd_u32 hold, st;
	int i;

	(void)ctx;
	REQUIRE(!locked);
	for (i = 0; i < NBUFS && bufs[i]; i++)
		;
	if (i == NBUFS)
		return SD_NV_ERR_OPERATING_SYSTEM;
	st = sd_dmabuf_dup(f->node, f->minor, &henv, p, &hold);
	if (st == SD_NV_OK) {
		bufs[i] = hold;
		p->fd = i;
	}
	return st;
}

/* The last reference to dma-buf fd goes. */
static void h_dmabuf_close(struct sd_node *n, int fd)
{
	if (fd < 0 || fd >= NBUFS || !bufs[fd])
		return;
	sd_dmabuf_release(n, &henv, bufs[fd]);
	bufs[fd] = 0;
}

static const struct sd_env henv = {
	.copy_in = h_copy_in, .copy_out = h_copy_out, .gpu_open = h_gpu_open,
	.ctl_get = h_ctl_get, .ctl_put = h_ctl_put,
	.caller = h_caller, .lock = h_lock, .unlock = h_unlock, .rm_ioctl = h_rm_ioctl,
	.dmabuf_export = h_dmabuf_export,
};

/* nvidia-uvm's calls into RM, as the module's nvUvmInterface functions make them; ctx: the node. */
static sd_u32 h_va_dup(void *ctx, sd_u32 gpu, sd_u32 hClient, sd_u32 hMemory, sd_u32 *hdup,
		       struct sd_dup_info *info)
{
	REQUIRE(!locked);
	return sd_uvm_dup(ctx, &henv, gpu, hClient, hMemory, hdup, info);
}

static void h_va_free_dup(void *ctx, sd_u32 gpu, sd_u32 hdup)
{
	REQUIRE(!locked);
	REQUIRE(sd_uvm_free_dup(ctx, &henv, gpu, hdup) == SD_NV_OK);
}

/*
 * What nvidia-uvm has the driver keep (sd_uvm_retain, sd_uvm_dup_vaspace): the token is
 * its hold's handle, never 0 (a handle is not 0).
 */
static sd_u32 h_va_keep(sd_u32 (*keep)(struct sd_node *n, const struct sd_env *env, sd_u32 gpu,
				       sd_u32 hClient, sd_u32 h, sd_u32 *hold),
			void *ctx, sd_u32 gpu, sd_u32 hClient, sd_u32 h, void **token)
{
	sd_u32 hold = 0, st;

	REQUIRE(!locked);
	st = keep(ctx, &henv, gpu, hClient, h, &hold);
	if (st == SD_NV_OK) {
		REQUIRE(hold);
		*token = (void *)(unsigned long)hold;
	}
	return st;
}

static sd_u32 h_va_retain(void *ctx, sd_u32 gpu, sd_u32 hClient, sd_u32 hChannel, void **token)
{
	return h_va_keep(sd_uvm_retain, ctx, gpu, hClient, hChannel, token);
}

static void h_va_release(void *ctx, void *token)
{
	REQUIRE(!locked);
	sd_uvm_release(ctx, &henv, (sd_u32)(unsigned long)token);
}

static sd_u32 h_va_dup_vaspace(void *ctx, sd_u32 gpu, sd_u32 hClient, sd_u32 hVaSpace, void **token)
{
	return h_va_keep(sd_uvm_dup_vaspace, ctx, gpu, hClient, hVaSpace, token);
}

static sd_u32 h_va_tables(void *ctx, sd_u32 gpu, sd_u64 bytes, int take)
{
	REQUIRE(!locked);
	return sd_uvm_tables(ctx, &henv, gpu, bytes, take);
}

static sd_u32 h_va_pages(void *ctx, sd_u32 gpu, sd_u64 bytes, int take)
{
	REQUIRE(!locked);
	return sd_uvm_pages(ctx, &henv, gpu, bytes, take);
}

static struct sd_va_env h_va_env(struct sd_node *n)
{
	struct sd_va_env e = { .ctx = n, .ngpus = n->ngpus, .dup = h_va_dup, .free_dup = h_va_free_dup,
			       .retain = h_va_retain, .release = h_va_release,
			       .dup_vaspace = h_va_dup_vaspace, .destroy_vaspace = h_va_release,
			       .tables = h_va_tables, .pages = h_va_pages };

	return e;
}

static void add_bytes(void *sum, sd_u32 pid, sd_u64 bytes)
{
	(void)pid;
	*(sd_u64 *)sum += bytes;
}

/* The ledger agrees with the live objects of every client, and with the per-client
 * list of each GPU. */
static void check_ledger(const struct sd_node *n)
{
	sd_u64 sum[SD_MAX_GPUS] = {0}, held[SD_MAX_GPUS] = {0}, reported[SD_MAX_GPUS] = {0};
	const struct sd_client *c;
	const struct sd_obj *o;
	sd_u32 i;

	/*
	 * Each memory once: under the object it is listed under, which names it; what the
	 * channels and VA spaces hold is in the GPU's figure, in no process's.
	 */
	for (c = n->clients; c; c = c->next)
		for (o = c->objs; o; o = o->next) {
			REQUIRE(o->gpu < n->ngpus);
			/* A device's own VA space: its page directory, its alone. */
			REQUIRE(!o->vas || (o->cls == SD_NV01_DEVICE_0 && o->vas->internal &&
					    o->vas->refs == 1 && o->vas->gpu == o->gpu &&
					    o->vas->bytes == SD_VASPACE_HELD && o->vas->held == o->vas->bytes));
			if (o->vas) {
				sum[o->gpu] += o->vas->held;
				reported[o->gpu] += o->vas->bytes;
				held[o->gpu] += o->vas->bytes;
			}
			/*
			 * A channel's, group's or VA space's own memory (a retainer's: its
			 * channel's), of its size; a VA range's page tables, all it pins or
			 * none (LAZY), the object's size the range's.
			 */
			REQUIRE((o->mem && o->mem->internal) ==
				(o->cls == SD_KEPLER_CHANNEL_GROUP_A || o->cls == SD_TURING_CHANNEL_GPFIFO_A ||
				 o->cls == SD_UVM_CHANNEL_RETAINER || o->cls == SD_FERMI_VASPACE_A ||
				 o->cls == SD_NV50_MEMORY_VIRTUAL));
			REQUIRE(!o->space || o->cls == SD_NV50_MEMORY_VIRTUAL);
			if (!o->mem)
				continue;
			REQUIRE(o->mem->refs >= 1 && o->mem->gpu < n->ngpus && o->mem->listed);
			if (o->cls == SD_NV50_MEMORY_VIRTUAL) {
				REQUIRE(o->mem->bytes && o->mem->bytes % SD_RANGE_ALIGN == 0);
				REQUIRE(o->mem->held == 0 || o->mem->held == sd_range_tables(o->mem->bytes));
			} else {
				REQUIRE(!o->mem->internal || o->mem->bytes ==
					(o->cls == SD_KEPLER_CHANNEL_GROUP_A ? SD_GROUP_HELD :
					 o->cls == SD_FERMI_VASPACE_A ? SD_VASPACE_HELD : SD_CHANNEL_HELD));
				/*
				 * The GPU holds memory in PMA's 64 KiB pages; RM reports its size.
				 * System memory, in 4 KiB pages, it does not hold.
				 */
				REQUIRE(o->mem->held == (o->mem->internal ? o->mem->bytes :
					o->mem->sysmem ? 0 :
					(o->mem->bytes + SD_PMA_GRANULE - 1) / SD_PMA_GRANULE * SD_PMA_GRANULE));
				REQUIRE(!o->mem->sysmem || (o->mem->bytes % SD_PAGE_4K == 0 &&
							    o->mem->page == SD_PAGE_4K && !o->mem->internal));
			}
			if (o->mem->listed == o && !o->mem->sysmem) {
				sum[o->mem->gpu] += o->mem->held;
				reported[o->mem->gpu] += o->mem->bytes;
			}
			if (o->mem->listed == o && o->mem->internal)
				held[o->mem->gpu] += o->mem->bytes;
		}
	for (i = 0; i < SD_MAX_GPUS; i++) {
		sd_u64 listed = 0;

		sd_gpu_clients(n, i, add_bytes, &listed);
		REQUIRE(listed + held[i] == reported[i]);
		/* nvidia-uvm's page tables and pages: in the GPU's figure, in no process's. */
		REQUIRE(sum[i] + n->uvm_tables[i] + n->uvm_pages[i] == n->used[i]);
		REQUIRE(n->used[i] <= n->total[i]);
	}
}

#endif
