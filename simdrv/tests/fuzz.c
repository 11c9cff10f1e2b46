// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libFuzzer target: random sequences of ioctls, closes and allocation failures on four
 * open files (two of /dev/nvidiactl, /dev/nvidia0, /dev/nvidia1). After every step the
 * physical memory used on each GPU equals the sum of the live objects, every object's
 * parent lives in its client, every client is a file's, a live dma-buf's or nvidia-uvm's,
 * every duplicate a mapping holds is counted by the pieces that hold it, and no user copy
 * happened under the lock; once every file, dma-buf and va_space is closed nothing is
 * used and nothing is left allocated. Two nvidia-uvm va_spaces map and free too.
 */
#include <stdint.h>
#include "harness.h"

#define NFILES	4

struct input {
	const uint8_t *d;
	size_t n;
};

static uint8_t byte(struct input *in)
{
	uint8_t b = 0;

	if (in->n) {
		b = *in->d++;
		in->n--;
	}
	return b;
}

static sd_u32 u32(struct input *in)
{
	sd_u32 v = byte(in);

	return v | (sd_u32)byte(in) << 8 | (sd_u32)byte(in) << 16 | (sd_u32)byte(in) << 24;
}

/* Few handles, so that duplicates, cross-client and freed handles come up often. */
static sd_u32 handle(struct input *in)
{
	static const sd_u32 pool[] = { 0, 0x10, 0x11, 0x1000, 0x1001, 0x2000, 0x2001,
		SD_CLIENT_HANDLE_BASE, SD_OBJ_HANDLE_BASE, SD_OBJ_HANDLE_BASE + 1 };
	uint8_t b = byte(in);

	return b < 240 ? pool[b % (sizeof(pool) / sizeof(pool[0]))] : u32(in);
}

/* Valid, unaligned, NULL, straddling the end, or wild. */
static sd_u64 pointer(struct input *in, sd_u64 good)
{
	switch (byte(in) % 8) {
	case 0: return 0;
	case 1: return good + 1;
	case 2: return UBASE + USIZE - 64;
	case 3: return ~0ULL - 7;
	default: return good;
	}
}

static sd_u32 size_of(struct input *in, sd_u32 natural)
{
	switch (byte(in) % 8) {
	case 0: return byte(in);
	case 1: return natural + 1;
	default: return natural;
	}
}

/* How many objects name m: what its count must be. */
static sd_u32 names(const struct sd_node *n, const struct sd_mem *m)
{
	const struct sd_client *c;
	const struct sd_obj *o;
	sd_u32 k = 0;

	for (c = n->clients; c; c = c->next)
		for (o = c->objs; o; o = o->next)
			k += o->mem == m;
	return k;
}

/*
 * Closes f as the kernel would: not while another file's registration holds it (the
 * caller skips), and with its own registration's reference let go after.
 */
static int fuzz_release(struct sd_file *f, struct sd_file files[NFILES])
{
	int i;

	for (i = 0; i < NFILES; i++)
		if (files[i].ctl == f)
			return 0;
	sd_file_release(f);
	if (f->ctl_ref)
		h_ctl_put(0, f->ctl_ref);
	f->ctl = 0;
	f->ctl_ref = 0;
	return 1;
}

static void check_tree(const struct sd_node *n, struct sd_file files[NFILES])
{
	const struct sd_client *c;
	const struct sd_obj *o, *p;
	int i, owned;

	check_ledger(n);
	REQUIRE(!locked);
	for (c = n->clients; c; c = c->next) {
		for (owned = 0, i = 0; i < NFILES; i++)
			owned |= c->file == &files[i];
		/* Or the driver's own, held by a dma-buf, or nvidia-uvm's one session. */
		for (i = 0; i < NBUFS; i++)
			owned |= !c->file && !c->pid && bufs[i] == c->handle;
		owned |= !c->file && !c->pid && n->uvm_session == c->handle;
		REQUIRE(owned);
		for (o = c->objs; o; o = o->next) {
			if (o->mem)
				REQUIRE(names(n, o->mem) == o->mem->refs);
			if (!o->parent)
				continue;
			for (p = c->objs; p && p != o->parent; p = p->next)
				;
			REQUIRE(p);
		}
	}
}

static void one_call(struct sd_file *f, struct input *in)
{
	sd_u8 block[SD_MAX_IOCTL_SIZE];
	sd_u32 nr, size, cls, k;
	static const sd_u32 classes[] = { SD_NV01_ROOT, SD_NV01_ROOT_NON_PRIV, SD_NV01_ROOT_CLIENT,
		SD_NV01_DEVICE_0, SD_NV20_SUBDEVICE_0, SD_NV01_MEMORY_LOCAL_USER };
	struct sd_memory_alloc m;
	struct sd_nvos64 p;
	struct sd_nvos00 fr;
	struct sd_nvos55 dp;
	int wrap = byte(in) % 4 == 0;

	memset(block, 0, sizeof(block));
	switch (byte(in) % 8) {
	case 0: case 1: case 2: /* RM_ALLOC */
		nr = SD_ESC_RM_ALLOC;
		k = byte(in);
		/*
		 * 250 and 251: the channel classes, 252 the VA space's, 253 the VA range's,
		 * 254 system memory's (joined later: older seeds keep their meaning but for
		 * those).
		 */
		cls = k < 250 ? classes[k % 6] : k == 250 ? SD_KEPLER_CHANNEL_GROUP_A :
		      k == 251 ? SD_TURING_CHANNEL_GPFIFO_A : k == 252 ? SD_FERMI_VASPACE_A :
		      k == 253 ? SD_NV50_MEMORY_VIRTUAL : k == 254 ? SD_NV01_MEMORY_SYSTEM : u32(in);
		memset(&p, 0, sizeof(p));
		p.hRoot = handle(in);
		p.hObjectParent = handle(in);
		p.hObjectNew = handle(in);
		p.hClass = cls;
		p.pAllocParms = pointer(in, UBASE + 4096);
		p.paramsSize = u32(in);
		/* Class parameters: a device id, or a memory request of some size. */
		memset(&m, 0, sizeof(m));
		m.owner = byte(in) % 4 ? 0xcafe : byte(in);
		m.size = (sd_u64)u32(in) << (byte(in) % 24);
		m.attr = byte(in) % 4 ? 0 : u32(in);
		m.attr2 = byte(in) % 4 ? 0 : u32(in);
		m.flags = byte(in) % 8 ? 0 : u32(in);
		if (cls == SD_NV01_DEVICE_0 || cls == SD_NV20_SUBDEVICE_0)
			*(sd_u32 *)&m = byte(in) % 5;
		/* System memory: mostly in the PCI location (else refused). */
		if (cls == SD_NV01_MEMORY_SYSTEM && byte(in) % 4)
			m.attr = (m.attr & ~(SD_ATTR_LOCATION_MASK << SD_ATTR_LOCATION_SHIFT)) |
				 SD_ATTR_LOCATION_PCI << SD_ATTR_LOCATION_SHIFT;
		/* A range: VIRTUAL (else refused), LAZY or not, in its device's VA space or one named. */
		if (cls == SD_NV50_MEMORY_VIRTUAL) {
			m.flags |= SD_ALLOC_FLAGS_VIRTUAL | (byte(in) % 2 ? SD_ALLOC_FLAGS_LAZY : 0);
			m.hVASpace = byte(in) % 2 ? handle(in) : 0;
		}
		if (p.pAllocParms == UBASE + 4096 + 1)
			memcpy(umem + 4096 + 1, &m, sizeof(m) - 1);
		else
			memcpy(umem + 4096, &m, sizeof(m));
		if (byte(in) % 2) {
			size = size_of(in, sizeof(p));
			memcpy(block, &p, sizeof(p));
		} else {
			struct sd_nvos21 q = { .hRoot = p.hRoot, .hObjectParent = p.hObjectParent,
				.hObjectNew = p.hObjectNew, .hClass = p.hClass,
				.pAllocParms = p.pAllocParms, .paramsSize = p.paramsSize };
			size = size_of(in, sizeof(q));
			memcpy(block, &q, sizeof(q));
		}
		break;
	case 6: /* RM_DUP_OBJECT */
		nr = SD_ESC_RM_DUP_OBJECT;
		dp = (struct sd_nvos55){ .hClient = handle(in), .hParent = handle(in), .hObject = handle(in),
			.hClientSrc = handle(in), .hObjectSrc = handle(in), .flags = byte(in) % 8 ? 0 : u32(in) };
		size = size_of(in, sizeof(dp));
		memcpy(block, &dp, sizeof(dp));
		break;
	case 3: case 4: /* RM_FREE */
		nr = SD_ESC_RM_FREE;
		fr = (struct sd_nvos00){ .hRoot = handle(in), .hObjectParent = handle(in), .hObjectOld = handle(in) };
		size = size_of(in, sizeof(fr));
		memcpy(block, &fr, sizeof(fr));
		break;
	case 5: /* the small escapes, with whatever bytes follow */
		k = byte(in) % 5;
		if (k == 4) {
			struct sd_export_dmabuf *e = (void *)block;

			nr = SD_ESC_EXPORT_TO_DMABUF_FD;
			size = size_of(in, sizeof(*e));
			e->fd = byte(in) % 4 ? -1 : (sd_s32)u32(in);
			e->hClient = handle(in);
			e->totalObjects = byte(in) % 4;
			e->numObjects = byte(in) % 4;
			e->index = byte(in) % 4 ? 0 : u32(in);
			e->totalSize = (sd_u64)byte(in) << 20 | (byte(in) % 4 ? 0 : u32(in));
			for (k = 0; k < 3; k++) {
				e->handles[k] = handle(in);
				e->offsets[k] = (sd_u64)(byte(in) % 4) << 20 | (byte(in) % 4 ? 0 : u32(in));
				e->sizes[k] = (sd_u64)(byte(in) % 8) << 19 | (byte(in) % 4 ? 0 : u32(in));
			}
			break;
		}
		nr = k == 0 ? SD_ESC_CHECK_VERSION_STR : k == 1 ? SD_ESC_CARD_INFO :
			k == 2 ? SD_ESC_ATTACH_GPUS_TO_FD : SD_ESC_REGISTER_FD;
		size = byte(in) | (sd_u32)(byte(in) % 2) << 8;
		for (k = 0; k < size; k++)
			block[k] = byte(in);
		if (nr == SD_ESC_ATTACH_GPUS_TO_FD && size >= 4 && byte(in) % 2)
			*(sd_u32 *)block = sd_gpu_id(byte(in) % 6);
		if (nr == SD_ESC_REGISTER_FD && byte(in) % 2) {
			size = sizeof(struct sd_register_fd);
			*(sd_s32 *)block = byte(in) % (NFILES + 1);
		}
		break;
	default: /* anything */
		nr = byte(in);
		size = byte(in) | (sd_u32)byte(in) << 8;
		size %= SD_MAX_IOCTL_SIZE + 2;
		for (k = 0; k < 64 && k < size; k++)
			block[k] = byte(in);
		break;
	}
	if (size > SD_MAX_IOCTL_SIZE)
		size = SD_MAX_IOCTL_SIZE;
	if (wrap) {
		struct sd_xfer x = { .cmd = nr, .size = size, .ptr = pointer(in, UBASE + 8192) };

		if (byte(in) % 8 == 0)
			x.size = u32(in);
		memcpy(umem, &x, sizeof(x));
		memcpy(umem + 8192, block, size < USIZE - 8192 ? size : USIZE - 8192);
		(void)sd_entry(f, &henv, SD_ESC_IOCTL_XFER_CMD, byte(in) % 8 ? sizeof(x) : byte(in), UBASE);
	} else {
		sd_u64 at = pointer(in, UBASE + 16384);

		memcpy(umem + 16384, block, size < USIZE - 16384 ? size : USIZE - 16384);
		if (size > 0x3fff)	/* _IOC_SIZE has 14 bits */
			size &= 0x3fff;
		(void)sd_entry(f, &henv, nr, size, at);
	}
}

/*
 * A kernel client's free or control, on whatever handles (rm_kernel_rmapi_op): the
 * surface query, or (joined later: older seeds whose command byte is a multiple of 4 and
 * has bit 2 set changed meaning) the class, parent and GPU queries.
 */
static void kernel_op(struct sd_node *node, struct input *in)
{
	static const sd_u32 cmds[] = { SD_NV0000_CTRL_CMD_CLIENT_GET_HANDLE_INFO,
		SD_NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2, SD_NV0080_CTRL_CMD_GPU_FIND_SUBDEVICE_HANDLE,
		SD_NV2080_CTRL_CMD_GPU_GET_ID };
	static const sd_u32 sizes[] = { sizeof(struct sd_nv0000_get_handle_info),
		sizeof(struct sd_nv0000_get_id_info_v2), sizeof(struct sd_nv0080_find_subdevice),
		sizeof(struct sd_nv2080_get_id) };
	struct sd_nv0041_surface_info list[3];
	union {
		struct sd_nv0041_get_surface_info gp;
		sd_u32 w[8];
	} u = { .gp = { .surfaceInfoListSize = byte(in) % 4,
			.surfaceInfoList = (sd_u64)(unsigned long)list } };
	struct sd_rmapi_ops ops = { .op = byte(in) % 2 ? SD_NV01_FREE : SD_NV04_CONTROL };
	sd_u32 cmd, size;
	int k;

	for (k = 0; k < 3; k++)
		list[k] = (struct sd_nv0041_surface_info){ .index = byte(in) % 11 };
	if (ops.op == SD_NV01_FREE) {
		ops.params.free = (struct sd_nvos00){ .hRoot = handle(in), .hObjectOld = handle(in) };
	} else {
		ops.params.control = (struct sd_nvos54){ .hClient = handle(in), .hObject = handle(in) };
		k = byte(in);
		cmd = SD_NV0041_CTRL_CMD_GET_SURFACE_INFO;
		size = sizeof(u.gp);
		if (k % 4 == 0 && k & 4) {
			cmd = cmds[(k >> 3) % 4];
			size = sizes[(k >> 3) % 4];
			/* A handle, a GPU id or a subdevice instance first; an index second. */
			u.w[0] = byte(in) % 2 ? handle(in) : sd_gpu_id(byte(in) % 5);
			u.w[1] = byte(in) % 4;
		} else if (k % 4 == 0) {
			cmd = u32(in);
		}
		ops.params.control.cmd = cmd;
		ops.params.control.params = (sd_u64)(unsigned long)&u;
		ops.params.control.paramsSize = byte(in) % 4 ? size : byte(in) % sizeof(u);
	}
	sd_kernel_op(node, &henv, &ops);
}

#define NSPACES 2

/*
 * Each duplicate's count is the number of mapping pieces that hold it; each registered
 * channel and GPU VA space is on a registered GPU, a channel under handles no other of
 * its va_space has.
 */
/*
 * Each page table is needed by as many mappings as it counts (worked out again here from
 * the tree's shape: 128 TiB, 256 GiB, 512 MiB, then 2 MiB of 4 KiB or 64 KiB pages), and
 * what they hold is what the GPUs' figures hold for nvidia-uvm.
 */
static const struct sd_node *fuzz_node;	/* the run's, for check_tables */

static void check_tables(const struct sd_va_space sp[NSPACES])
{
	static const sd_u32 shift[SD_VA_LEVELS] = { 47, 38, 29, 21, 21 };
	static const sd_u32 size[SD_VA_LEVELS] = { 4096, 4096, 4096, 4096, 256 };
	const struct sd_va_table *t;
	const struct sd_va_range *r;
	const struct sd_va_map *m;
	sd_u64 bytes = 0;
	sd_u32 refs, b;
	int i;

	for (i = 0; i < NSPACES; i++) {
		for (b = 0; b < SD_VA_TABLE_BUCKETS; b++)
			for (t = sp[i].tables[b]; t; t = t->next) {
				bytes += size[t->level];
				refs = 0;
				for (r = sp[i].ranges; r; r = r->next)
					for (m = r->maps; m; m = m->next)
						refs += m->gpu == t->gpu &&
							(t->level <= SD_VA_PD0 ||
							 m->page == (t->level == SD_VA_PT4K ? SD_PAGE_4K : SD_PAGE_BIG)) &&
							m->start >> shift[t->level] <= t->index &&
							t->index <= m->end >> shift[t->level];
				REQUIRE(refs == t->refs && refs > 0);
			}
	}
	REQUIRE(bytes == fuzz_node->uvm_tables[0] + fuzz_node->uvm_tables[1]);
}

/*
 * Managed ranges meet neither each other nor an external range; what GPUs hold of
 * managed or pageable memory does not overlap, is on registered GPUs, and is all the
 * GPUs' figure of it.
 */
static void check_managed(const struct sd_va_space sp[NSPACES])
{
	const struct sd_va_span *a, *b;
	const struct sd_va_range *r;
	sd_u64 bytes = 0;
	int i;

	for (i = 0; i < NSPACES; i++) {
		for (a = sp[i].managed; a; a = a->next) {
			REQUIRE(a->start <= a->end);
			for (b = a->next; b; b = b->next)
				REQUIRE(b->end < a->start || b->start > a->end);
			for (r = sp[i].ranges; r; r = r->next)
				REQUIRE(r->end < a->start || r->start > a->end);
		}
		for (a = sp[i].resident; a; a = a->next) {
			REQUIRE(a->start <= a->end && ((sp[i].registered >> a->gpu) & 1));
			for (b = a->next; b; b = b->next)
				REQUIRE(b->end < a->start || b->start > a->end);
			bytes += a->end - a->start + 1;
		}
	}
	REQUIRE(bytes == fuzz_node->uvm_pages[0] + fuzz_node->uvm_pages[1]);
}

static void check_spaces(const struct sd_va_space sp[NSPACES])
{
	const struct sd_va_channel *c, *d;
	const struct sd_va_range *r;
	const struct sd_va_map *m, *q;
	sd_u32 k;
	int i;

	for (i = 0; i < NSPACES; i++)
		for (k = 0; k < 32; k++)
			REQUIRE(!sp[i].gpu_va_space[k] || ((sp[i].registered >> k) & 1));
	for (i = 0; i < NSPACES; i++)
		for (c = sp[i].channels; c; c = c->next) {
			REQUIRE((sp[i].registered >> c->gpu) & 1);
			for (d = c->next; d; d = d->next)
				REQUIRE(d->hClient != c->hClient || d->hChannel != c->hChannel);
		}
	for (i = 0; i < NSPACES; i++)
		for (r = sp[i].ranges; r; r = r->next) {
			/*
			 * A region or a pool maps no memory, over all of it, in GPU VA spaces
			 * alone: a region once at its one page, a pool at 4 KiB pages in each.
			 */
			if (r->kind != SD_VA_EXTERNAL) {
				for (k = 0; k < 32; k++) {
					sd_u32 n = 0;

					for (m = r->maps; m; m = m->next) {
						REQUIRE(!m->dup && m->start == r->start && m->end == r->end);
						REQUIRE(m->page == (r->kind == SD_VA_POOL ? SD_PAGE_4K :
								    r->end - r->start + 1));
						n += m->gpu == k;
					}
					REQUIRE(n <= 1 && (!n || sp[i].gpu_va_space[k]));
					REQUIRE(r->kind != SD_VA_POOL || n == !!sp[i].gpu_va_space[k]);
				}
				continue;
			}
			for (m = r->maps; m; m = m->next) {
				REQUIRE(r->start <= m->start && m->start <= m->end && m->end <= r->end);
				/* A sparse mapping has no duplicate, and its tables at 64 KiB pages. */
				if (!m->dup) {
					REQUIRE(m->page == SD_PAGE_BIG);
					continue;
				}
				for (k = 0, q = r->maps; q; q = q->next)
					k += q->dup == m->dup;
				REQUIRE(k == m->dup->refs);
			}
		}
	check_tables(sp);
	check_managed(sp);
}

/* One nvidia-uvm command on a va_space, on few addresses so that ranges meet. */
static void va_call(struct sd_va_space *s, const struct sd_va_env *e, struct input *in)
{
	struct sd_uvm_gpu_mapping a[3];
	struct sd_uvm_map_head h;
	struct sd_uvm_map_tail t;
	sd_u8 uuid[SD_UUID_LEN];
	sd_u32 k;

	sd_gpu_uuid(byte(in) % 3, uuid);
	h.base = 0x100000000ULL + ((sd_u64)(byte(in) % 8) << 20) + (byte(in) % 8 ? 0 : byte(in));
	h.length = ((sd_u64)(byte(in) % 8) << 20) + (byte(in) % 8 ? 0 : (sd_u64)byte(in) << 12);
	h.offset = byte(in) % 4 ? 0 : (sd_u64)byte(in) << 12;
	switch (byte(in) % 10) {
	case 0:
		(void)sd_va_register_gpu(s, e, uuid);
		break;
	case 8: {
		struct sd_uvm_register_gpu_vaspace r = { .hClient = handle(in), .hVaSpace = handle(in) };

		memcpy(r.gpuUuid, uuid, SD_UUID_LEN);
		(void)sd_va_register_gpu_vaspace(s, e, &r);
		break;
	}
	case 9: {
		struct sd_uvm_unregister_gpu_vaspace u = { .rmStatus = 0 };

		memcpy(u.gpuUuid, uuid, SD_UUID_LEN);
		(void)sd_va_unregister_gpu_vaspace(s, e, &u);
		break;
	}
	case 6: {
		struct sd_uvm_register_channel r = { .hClient = handle(in), .hChannel = handle(in) };

		memcpy(r.gpuUuid, uuid, SD_UUID_LEN);
		fail_alloc_after = byte(in) % 4 ? -1 : byte(in) % 3;
		(void)sd_va_register_channel(s, e, &r);
		fail_alloc_after = -1;
		break;
	}
	case 7: {
		struct sd_uvm_unregister_channel u = { .hClient = handle(in), .hChannel = handle(in) };

		memcpy(u.gpuUuid, uuid, SD_UUID_LEN);
		(void)sd_va_unregister_channel(s, e, &u);
		break;
	}
	case 1:
		(void)sd_va_unregister_gpu(s, e, uuid);
		break;
	case 2:
		switch (byte(in) % 6) {
		case 0:
			(void)sd_va_create_managed(s, e, h.base, h.length);
			break;
		case 1: {
			static const sd_u64 page[] = { SD_PAGE_4K, SD_PAGE_BIG, SD_PAGE_HUGE };
			struct sd_uvm_map_dp_region dp = { .base = h.base };

			dp.length = byte(in) % 4 ? page[byte(in) % 3] : h.length;
			memcpy(dp.gpuUuid, uuid, SD_UUID_LEN);
			fail_alloc_after = byte(in) % 4 ? -1 : byte(in) % 3;
			(void)sd_va_map_dp_region(s, e, &dp);
			fail_alloc_after = -1;
			break;
		}
		case 2: {
			struct sd_uvm_pool_head ph = { .base = h.base, .length = h.length };
			struct sd_uvm_pool_tail pt = { .gpuAttributesCount = byte(in) % 4 };

			memset(a, 0, sizeof(a));
			for (k = 0; k < 3; k++)
				sd_gpu_uuid(byte(in) % 3, a[k].gpuUuid);
			fail_alloc_after = byte(in) % 4 ? -1 : byte(in) % 3;
			(void)sd_va_alloc_pool(s, e, &ph, a, 3, &pt);
			fail_alloc_after = -1;
			break;
		}
		default:
			(void)sd_va_create_range(s, h.base, h.length);
			break;
		}
		break;
	case 3:
		if (byte(in) % 3)
			(void)sd_va_free(s, e, h.base, h.length);
		else
			sd_va_unmap_managed(s, e, h.base, h.length);
		break;
	case 4: {
		struct sd_uvm_migrate m = { .base = h.base, .length = h.length,
					    .flags = byte(in) % 8 ? 0 : byte(in) };

		if (byte(in) % 4)
			memcpy(m.destinationUuid, uuid, SD_UUID_LEN);
		s->flags = byte(in) % 2 ? SD_UVM_INIT_FLAGS_DISABLE_HMM : 0;
		fail_alloc_after = byte(in) % 4 ? -1 : byte(in) % 3;
		(void)sd_va_migrate(s, e, &m);
		fail_alloc_after = -1;
		break;
	}
	case 5:
		if (byte(in) % 2) {
			struct sd_uvm_map_external_sparse sp = { .base = h.base, .length = h.length };

			memcpy(sp.gpuUuid, uuid, SD_UUID_LEN);
			fail_alloc_after = byte(in) % 4 ? -1 : byte(in) % 3;
			(void)sd_va_map_sparse(s, e, &sp);
			fail_alloc_after = -1;
			break;
		}
		/* fall through */
	default:
		memset(a, 0, sizeof(a));
		for (k = 0; k < 3; k++) {
			sd_gpu_uuid(byte(in) % 3, a[k].gpuUuid);
			a[k].gpuMappingType = byte(in) % 8 ? 0 : byte(in);
		}
		t = (struct sd_uvm_map_tail){ .gpuAttributesCount = byte(in) % 4,
			.hClient = handle(in), .hMemory = handle(in) };
		fail_alloc_after = byte(in) % 4 ? -1 : byte(in) % 3;
		(void)sd_va_map(s, e, &h, a, 3, &t);
		fail_alloc_after = -1;
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static const sd_u32 minors[NFILES] = { SD_CTL_MINOR, SD_CTL_MINOR, 0, 1 };
	struct input in = { data, len };
	struct sd_node node;
	struct sd_file files[NFILES];
	struct sd_va_space spaces[NSPACES];
	struct sd_va_env ve;
	int i, k, steps = 0, done[NFILES], uvm;

	/* The first byte: the release, and whether op 5 is nvidia-uvm's (older seeds' is not). */
	k = byte(&in);
	uvm = k & 2;
	REQUIRE(sd_node_init(&node, 2, 64ULL << 20, k % 2 ? "535.261.03" : "550.163.01") == SD_OK);
	for (i = 0; i < NFILES; i++) {
		sd_file_init(&files[i], &node, minors[i]);
		fd_files[i] = &files[i];
	}
	memset(spaces, 0, sizeof(spaces));
	ve = h_va_env(&node);
	fuzz_node = &node;
	gpu_open_mask = 3;
	while (in.n && steps++ < 64) {
		uint8_t op = byte(&in);
		struct sd_file *f = &files[op % NFILES];

		switch ((op >> 2) % 8) {
		case 0: /* close and reopen */
			if (fuzz_release(f, files))
				sd_file_init(f, &node, minors[op % NFILES]);
			break;
		case 1:
			/* Which GPUs the caller holds open, and which of two processes it is. */
			gpu_open_mask = byte(&in) % 4;
			caller_pid = 1000 + byte(&in) % 2;
			break;
		case 2:
			fail_alloc_after = byte(&in) % 3;
			one_call(f, &in);
			fail_alloc_after = -1;
			break;
		case 3:
			kernel_op(&node, &in);
			break;
		case 4: /* a dma-buf's last reference goes */
			h_dmabuf_close(&node, byte(&in) % NBUFS);
			break;
		case 5: /* nvidia-uvm, or a va_space's end */
			if (!uvm)
				one_call(f, &in);
			else if (byte(&in) % 16)
				va_call(&spaces[op % NSPACES], &ve, &in);
			else
				sd_va_destroy(&spaces[op % NSPACES], &ve);
			break;
		default:
			one_call(f, &in);
			break;
		}
		check_tree(&node, files);
		check_spaces(spaces);
	}
	for (i = 0; i < NBUFS; i++)
		h_dmabuf_close(&node, i);
	for (i = 0; i < NSPACES; i++)
		sd_va_destroy(&spaces[i], &ve);
	sd_uvm_sessions_free(&node);
	/* Those no registration holds first (a file registered to may register in turn). */
	memset(done, 0, sizeof(done));
	for (k = 0; k < NFILES; k++)
		for (i = 0; i < NFILES; i++)
			if (!done[i])
				done[i] = fuzz_release(&files[i], files);
	for (i = 0; i < NFILES; i++)
		REQUIRE(done[i]);
	REQUIRE(node.clients == NULL && ctl_refs == 0);
	for (i = 0; i < SD_MAX_GPUS; i++)
		REQUIRE(node.used[i] == 0);
	REQUIRE(live_allocs == 0);
	return 0;
}
