// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * nvidia-uvm's external ranges, from 535's uvm_map_external.c, uvm_va_space.c and
 * uvm_api.h: their checks in their order, with their statuses. Not modelled: GPU VA
 * spaces (UVM_REGISTER_GPU_VASPACE; a registered GPU maps), peers (a mapping on another
 * GPU than the memory's is NV_ERR_INVALID_DEVICE), MIG partitions, and every range that
 * is neither external nor managed. Managed ranges (uvm.c's mmap) and, with HMM, the
 * process's pageable memory move to a GPU by UVM_MIGRATE alone (no fault is modelled),
 * each 4 KiB page taking 4 KiB of the GPU's memory (not nvidia-uvm's 2 MiB root chunks),
 * back when the range or the part of it goes, the GPU is unregistered, the memory moves
 * to the CPU, or the va_space ends (pageable memory's own unmap is not seen). The
 * mappings' page tables are (uvm_mmu.c, uvm_pascal_mmu.c): per GPU
 * a tree of 4 KiB directories, of 4 KiB tables for 4 KiB pages and 256-byte ones for
 * 64 KiB pages (2 MiB pages are entries of the last directory), each made by the first
 * mapping that needs it and freed with the last; not modelled: the root, the chunks
 * nvidia-uvm packs them in, and a split's alignment to the mapping's page size.
 */
#include "rm.h"
#include "vaspace.h"

int sd_gpu_of_uuid(const sd_u8 *uuid, sd_u32 ngpus)
{
	sd_u8 want[SD_UUID_LEN];
	sd_u32 g;

	for (g = 0; g < ngpus; g++) {
		sd_gpu_uuid(g, want);
		if (!__builtin_memcmp(want, uuid, SD_UUID_LEN))
			return (int)g;
	}
	return -1;
}

/* uvm_api_range_invalid_4k */
static int range_invalid_4k(sd_u64 base, sd_u64 length)
{
	return (base | length) & (SD_PAGE_4K - 1) || base == 0 || length == 0 || base + length < base;
}

/* uvm_api_range_invalid_64k */
static int range_invalid_64k(sd_u64 base, sd_u64 length)
{
	return (base | length) & (SD_PAGE_BIG - 1) || base == 0 || length == 0 || base + length < base;
}

static int registered(const struct sd_va_space *s, sd_u32 gpu)
{
	return (s->registered >> gpu) & 1;
}

/* Each level's span (the address bits one table covers) and table size. */
static const struct {
	sd_u32 shift, bytes;
} levels[SD_VA_LEVELS] = {
	[SD_VA_PD2] = { 47, 4096 }, [SD_VA_PD1] = { 38, 4096 }, [SD_VA_PD0] = { 29, 4096 },
	[SD_VA_PT4K] = { 21, 4096 }, [SD_VA_PT64K] = { 21, 256 },
};

/* Whether a mapping of page size page needs tables of level. */
static int level_needed(sd_u32 level, sd_u64 page)
{
	return level <= SD_VA_PD0 || (level == SD_VA_PT4K && page == SD_PAGE_4K) ||
	       (level == SD_VA_PT64K && page == SD_PAGE_BIG);
}

static struct sd_va_table **table_find(struct sd_va_space *s, sd_u32 gpu, sd_u32 level, sd_u64 index)
{
	struct sd_va_table **pp;
	sd_u64 key = index * 0x9e3779b97f4a7c15ULL + level * 31 + gpu;

	for (pp = &s->tables[(key >> 56) % SD_VA_TABLE_BUCKETS]; *pp; pp = &(*pp)->next)
		if ((*pp)->gpu == gpu && (*pp)->level == level && (*pp)->index == index)
			break;
	return pp;
}

/* One more mapping needs the table: made, its memory taken from the GPU, if none yet. */
static sd_u32 table_get(struct sd_va_space *s, const struct sd_va_env *env, sd_u32 gpu,
			sd_u32 level, sd_u64 index)
{
	struct sd_va_table **pp = table_find(s, gpu, level, index), *t = *pp;
	sd_u32 st;

	if (t) {
		t->refs++;
		return SD_NV_OK;
	}
	t = sd_zalloc(sizeof(*t));
	if (!t)
		return SD_NV_ERR_NO_MEMORY;
	st = env->tables(env->ctx, gpu, levels[level].bytes, 1);
	if (st != SD_NV_OK) {
		sd_free(t);
		return st;
	}
	*t = (struct sd_va_table){ .index = index, .gpu = gpu, .level = level, .refs = 1 };
	*pp = t;
	return SD_NV_OK;
}

static void table_put(struct sd_va_space *s, const struct sd_va_env *env, sd_u32 gpu,
		      sd_u32 level, sd_u64 index)
{
	struct sd_va_table **pp = table_find(s, gpu, level, index), *t = *pp;

	if (--t->refs)
		return;
	*pp = t->next;
	env->tables(env->ctx, gpu, levels[level].bytes, 0);
	sd_free(t);
}

/*
 * The tables [start, end] at page size page needs on gpu, in a fixed order, let go of
 * up to (not including) (stop, at); stop SD_VA_LEVELS: all.
 */
static void tables_put_until(struct sd_va_space *s, const struct sd_va_env *env, sd_u32 gpu,
			     sd_u64 start, sd_u64 end, sd_u64 page, sd_u32 stop, sd_u64 at)
{
	sd_u32 l;
	sd_u64 i;

	for (l = 0; l < SD_VA_LEVELS; l++)
		for (i = start >> levels[l].shift; level_needed(l, page) && i <= end >> levels[l].shift; i++) {
			if (l == stop && i == at)
				return;
			table_put(s, env, gpu, l, i);
		}
}

static void tables_put(struct sd_va_space *s, const struct sd_va_env *env, const struct sd_va_map *m)
{
	tables_put_until(s, env, m->gpu, m->start, m->end, m->page, SD_VA_LEVELS, 0);
}

/*
 * uvm_page_table_range_vec_init: the tables [start, end] at page size page needs on gpu,
 * made where missing; none on failure (NV_ERR_NO_MEMORY: the GPU is full). A piece of
 * a mapping that has them never fails.
 */
static sd_u32 tables_get(struct sd_va_space *s, const struct sd_va_env *env, sd_u32 gpu,
			 sd_u64 start, sd_u64 end, sd_u64 page)
{
	sd_u32 l, st;
	sd_u64 i;

	for (l = 0; l < SD_VA_LEVELS; l++)
		for (i = start >> levels[l].shift; level_needed(l, page) && i <= end >> levels[l].shift; i++) {
			st = table_get(s, env, gpu, l, i);
			if (st != SD_NV_OK) {
				tables_put_until(s, env, gpu, start, end, page, l, i);
				return st;
			}
		}
	return SD_NV_OK;
}

/* A mapping's duplicate let go of (a sparse mapping has none). */
static void dup_put(const struct sd_va_env *env, struct sd_va_dup *d)
{
	if (!d || --d->refs)
		return;
	env->free_dup(env->ctx, d->gpu, d->hdup);
	sd_free(d);
}

/*
 * uvm_unmap_external_in_range: gpu's mappings in [start, end] go; one that sticks out
 * keeps what sticks out, its duplicate shared with the pieces. A split needs a new
 * piece; NV_ERR_NO_MEMORY (nothing unmapped yet of that mapping) if it cannot be had.
 */
static sd_u32 unmap_in(struct sd_va_space *s, struct sd_va_range *r, const struct sd_va_env *env,
		       sd_u32 gpu, sd_u64 start, sd_u64 end)
{
	struct sd_va_map **pp = &r->maps, *m, *tail, old;

	while ((m = *pp)) {
		if (m->gpu != gpu || m->end < start || m->start > end) {
			pp = &m->next;
			continue;
		}
		old = *m;
		if (m->start < start && m->end > end) {
			tail = sd_zalloc(sizeof(*tail));
			if (!tail)
				return SD_NV_ERR_NO_MEMORY;
			*tail = *m;
			tail->start = end + 1;
			if (tail->dup)
				tail->dup->refs++;
			m->end = start - 1;
			m->next = tail;
			pp = &tail->next;
			tables_get(s, env, gpu, tail->start, tail->end, tail->page);
		} else if (m->start < start) {
			m->end = start - 1;
			pp = &m->next;
		} else if (m->end > end) {
			m->start = end + 1;
			pp = &m->next;
		} else {
			*pp = m->next;
			tables_put(s, env, m);
			dup_put(env, m->dup);
			sd_free(m);
			continue;
		}
		/* The pieces keep their tables (taken first: they have them), the rest go. */
		tables_get(s, env, gpu, m->start, m->end, m->page);
		tables_put(s, env, &old);
	}
	return SD_NV_OK;
}

/* Bytes of [start, end] the spans of list cover (they do not overlap each other). */
static sd_u64 span_overlap(const struct sd_va_span *list, sd_u64 start, sd_u64 end)
{
	sd_u64 bytes = 0;

	for (; list; list = list->next)
		if (!(list->end < start || list->start > end))
			bytes += (list->end < end ? list->end : end) -
				 (list->start > start ? list->start : start) + 1;
	return bytes;
}

/*
 * What spans of *list hold of [start, end] (gpu ~0: every GPU's) goes, given back to
 * its GPU where pages (resident memory). At most one span is split (spans do not
 * overlap); where the piece for it cannot be had, the whole span goes.
 */
static void span_cut(struct sd_va_span **list, const struct sd_va_env *env, sd_u64 start,
		     sd_u64 end, sd_u32 gpu, int pages)
{
	struct sd_va_span *sp, **pp = list, *piece = sd_zalloc(sizeof(*piece));
	sd_u64 gone;
	sd_u32 held;

	while ((sp = *pp)) {
		if (sp->end < start || sp->start > end || (gpu != ~0u && sp->gpu != gpu)) {
			pp = &sp->next;
			continue;
		}
		held = sp->gpu;
		if (sp->start < start && sp->end > end && piece) {
			gone = end - start + 1;
			piece->start = end + 1;
			piece->end = sp->end;
			piece->gpu = sp->gpu;
			piece->next = sp->next;
			sp->next = piece;
			sp->end = start - 1;
			pp = &piece->next;
			piece = 0;
		} else if (sp->start < start && sp->end <= end) {
			gone = sp->end - start + 1;
			sp->end = start - 1;
			pp = &sp->next;
		} else if (sp->start >= start && sp->end > end) {
			gone = end - sp->start + 1;
			sp->start = end + 1;
			pp = &sp->next;
		} else {
			gone = sp->end - sp->start + 1;
			*pp = sp->next;
			sd_free(sp);
		}
		if (pages)
			env->pages(env->ctx, held, gone, 0);
	}
	sd_free(piece);
}

/* The external range holding addr (uvm_va_range_find of type EXTERNAL), or none. */
static struct sd_va_range *find_range(const struct sd_va_space *s, sd_u64 addr)
{
	struct sd_va_range *r;

	for (r = s->ranges; r; r = r->next)
		if (r->start <= addr && addr <= r->end)
			return r->kind == SD_VA_EXTERNAL ? r : 0;
	return 0;
}

/* Whether a range (of any kind) holds any of [start, end]. */
static int find_range_in(const struct sd_va_space *s, sd_u64 start, sd_u64 end)
{
	const struct sd_va_range *r;

	for (r = s->ranges; r; r = r->next)
		if (!(r->end < start || r->start > end))
			return 1;
	return 0;
}

/* Whether any range, managed or not, holds any of [start, end]: a new one may not. */
static int range_in_use(const struct sd_va_space *s, sd_u64 start, sd_u64 end)
{
	return find_range_in(s, start, end) || span_overlap(s->managed, start, end);
}

/* gpu's channels go (all with ~0): released. */
static void release_channels(struct sd_va_space *s, const struct sd_va_env *env, sd_u32 gpu)
{
	struct sd_va_channel **pp = &s->channels, *c;

	while ((c = *pp)) {
		if (gpu != ~0u && c->gpu != gpu) {
			pp = &c->next;
			continue;
		}
		*pp = c->next;
		env->release(env->ctx, c->token);
		sd_free(c);
	}
}

static struct sd_va_channel **find_channel(struct sd_va_space *s, sd_u32 hClient, sd_u32 hChannel)
{
	struct sd_va_channel **pp;

	for (pp = &s->channels; *pp; pp = &(*pp)->next)
		if ((*pp)->hClient == hClient && (*pp)->hChannel == hChannel)
			break;
	return pp;
}

/* gpu's GPU VA space goes, its channels first (gpu_va_space_stop_all_channels). */
static void destroy_gpu_va_space(struct sd_va_space *s, const struct sd_va_env *env, sd_u32 gpu)
{
	release_channels(s, env, gpu);
	if (s->gpu_va_space[gpu])
		env->destroy_vaspace(env->ctx, s->gpu_va_space[gpu]);
	s->gpu_va_space[gpu] = 0;
}

sd_u32 sd_va_register_gpu(struct sd_va_space *s, const struct sd_va_env *env, const sd_u8 *uuid)
{
	int g = sd_gpu_of_uuid(uuid, env->ngpus);

	if (g < 0)
		return SD_NV_ERR_GPU_UUID_NOT_FOUND;
	if (registered(s, (sd_u32)g))
		return SD_NV_ERR_INVALID_DEVICE;
	s->registered |= 1u << g;
	return SD_NV_OK;
}

sd_u32 sd_va_unregister_gpu(struct sd_va_space *s, const struct sd_va_env *env, const sd_u8 *uuid)
{
	int g = sd_gpu_of_uuid(uuid, env->ngpus);
	struct sd_va_range *r;

	if (g < 0 || !registered(s, (sd_u32)g))
		return SD_NV_ERR_INVALID_DEVICE;
	/* Whole mappings only: nothing is split, so nothing can fail. */
	for (r = s->ranges; r; r = r->next)
		unmap_in(s, r, env, (sd_u32)g, 0, ~0ULL);
	span_cut(&s->resident, env, 0, ~0ULL, (sd_u32)g, 1);
	destroy_gpu_va_space(s, env, (sd_u32)g);
	s->registered &= ~(1u << g);
	return SD_NV_OK;
}

static sd_u32 pools_map(struct sd_va_space *s, const struct sd_va_env *env, sd_u32 gpu);

/*
 * uvm_gpu_va_space_create: a registered GPU with no GPU VA space yet (else
 * NV_ERR_INVALID_DEVICE), then the duplicate into the GPU's field itself, whose status
 * is the answer, then the semaphore pools mapped there (uvm_va_range_add_gpu_va_space);
 * on an error whatever the call left there is destroyed, as nvidia-uvm's error path
 * does (destroy_gpu_va_space).
 */
sd_u32 sd_va_register_gpu_vaspace(struct sd_va_space *s, const struct sd_va_env *env,
				  const struct sd_uvm_register_gpu_vaspace *p)
{
	int g = sd_gpu_of_uuid(p->gpuUuid, env->ngpus);
	sd_u32 st;

	if (g < 0 || !registered(s, (sd_u32)g) || s->gpu_va_space[g])
		return SD_NV_ERR_INVALID_DEVICE;
	st = env->dup_vaspace(env->ctx, (sd_u32)g, p->hClient, p->hVaSpace, &s->gpu_va_space[g]);
	if (st == SD_NV_OK)
		st = pools_map(s, env, (sd_u32)g);
	if (st != SD_NV_OK && s->gpu_va_space[g]) {
		env->destroy_vaspace(env->ctx, s->gpu_va_space[g]);
		s->gpu_va_space[g] = 0;
	}
	return st;
}

sd_u32 sd_va_unregister_gpu_vaspace(struct sd_va_space *s, const struct sd_va_env *env,
				    const struct sd_uvm_unregister_gpu_vaspace *p)
{
	int g = sd_gpu_of_uuid(p->gpuUuid, env->ngpus);
	struct sd_va_range *r;

	if (g < 0 || !registered(s, (sd_u32)g) || !s->gpu_va_space[g])
		return SD_NV_ERR_INVALID_DEVICE;
	/*
	 * The tables of the ranges that map no RM memory go with it
	 * (uvm_va_range_remove_gpu_va_space); external ranges' mappings are not modelled
	 * as needing one.
	 */
	for (r = s->ranges; r; r = r->next)
		if (r->kind != SD_VA_EXTERNAL)
			unmap_in(s, r, env, (sd_u32)g, 0, ~0ULL);
	destroy_gpu_va_space(s, env, (sd_u32)g);
	return SD_NV_OK;
}

/*
 * uvm_register_channel: the GPU must be registered (with a GPU VA space, which is not
 * modelled); the channel is retained (uvm_user_channel_create) before the handles are
 * looked up among those registered on any GPU (find_user_channel), so a repeat is
 * retained and released again. The stand-in's channels have no resources to place, so
 * base and length are not looked at (uvm_register_channel_under_write: num_resources 0).
 */
sd_u32 sd_va_register_channel(struct sd_va_space *s, const struct sd_va_env *env,
			      const struct sd_uvm_register_channel *p)
{
	int g = sd_gpu_of_uuid(p->gpuUuid, env->ngpus);
	struct sd_va_channel *c;
	sd_u32 st;

	if (g < 0 || !registered(s, (sd_u32)g))
		return SD_NV_ERR_INVALID_DEVICE;
	c = sd_zalloc(sizeof(*c));
	if (!c)
		return SD_NV_ERR_NO_MEMORY;
	st = env->retain(env->ctx, (sd_u32)g, p->hClient, p->hChannel, &c->token);
	if (st != SD_NV_OK) {
		sd_free(c);
		return st;
	}
	if (*find_channel(s, p->hClient, p->hChannel)) {
		env->release(env->ctx, c->token);
		sd_free(c);
		return SD_NV_ERR_INVALID_CHANNEL;
	}
	c->gpu = (sd_u32)g;
	c->hClient = p->hClient;
	c->hChannel = p->hChannel;
	c->next = s->channels;
	s->channels = c;
	return SD_NV_OK;
}

/*
 * uvm_api_unregister_channel: the handles, registered on any GPU (the UUID is not looked
 * at: uvm_unregister_channel), else NV_ERR_INVALID_CHANNEL.
 */
sd_u32 sd_va_unregister_channel(struct sd_va_space *s, const struct sd_va_env *env,
				const struct sd_uvm_unregister_channel *p)
{
	struct sd_va_channel **pp, *c;

	pp = find_channel(s, p->hClient, p->hChannel);
	c = *pp;
	if (!c)
		return SD_NV_ERR_INVALID_CHANNEL;
	*pp = c->next;
	env->release(env->ctx, c->token);
	sd_free(c);
	return SD_NV_OK;
}

/* A range of kind over [start, end], where none is (else NV_ERR_UVM_ADDRESS_IN_USE). */
static sd_u32 range_make(struct sd_va_space *s, sd_u64 start, sd_u64 end, sd_u32 kind,
			 struct sd_va_range **out)
{
	struct sd_va_range *r;

	if (range_in_use(s, start, end))
		return SD_NV_ERR_UVM_ADDRESS_IN_USE;
	r = sd_zalloc(sizeof(*r));
	if (!r)
		return SD_NV_ERR_NO_MEMORY;
	r->start = start;
	r->end = end;
	r->kind = kind;
	r->next = s->ranges;
	s->ranges = r;
	if (out)
		*out = r;
	return SD_NV_OK;
}

sd_u32 sd_va_create_range(struct sd_va_space *s, sd_u64 base, sd_u64 length)
{
	if (range_invalid_4k(base, length))
		return SD_NV_ERR_INVALID_ADDRESS;
	return range_make(s, base, base + length - 1, SD_VA_EXTERNAL, 0);
}

/*
 * A mapping of no memory over [start, end] of r on gpu, its tables at page size page
 * made (uvm_page_table_range_vec_init); NV_ERR_NO_MEMORY with nothing made.
 */
static sd_u32 map_nothing(struct sd_va_space *s, struct sd_va_range *r, const struct sd_va_env *env,
			  sd_u32 gpu, sd_u64 start, sd_u64 end, sd_u64 page)
{
	struct sd_va_map *m = sd_zalloc(sizeof(*m));
	sd_u32 st;

	if (!m)
		return SD_NV_ERR_NO_MEMORY;
	st = tables_get(s, env, gpu, start, end, page);
	if (st != SD_NV_OK) {
		sd_free(m);
		return st;
	}
	m->start = start;
	m->end = end;
	m->page = page;
	m->gpu = gpu;
	m->next = r->maps;
	r->maps = m;
	return SD_NV_OK;
}

/* The biggest GPU page size (4K, 64K, 2M) the lowest set bit of align allows; 0: none. */
static sd_u64 mapping_page_size(sd_u64 align)
{
	static const sd_u64 sizes[] = { SD_PAGE_HUGE, SD_PAGE_BIG, SD_PAGE_4K };
	sd_u64 lowest = align & ~(align - 1);
	unsigned int i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (sizes[i] <= lowest)
			return sizes[i];
	return 0;
}

/* uvm_map_external_allocation_on_gpu, on a registered GPU. */
static sd_u32 map_on_gpu(struct sd_va_space *s, struct sd_va_range *r, const struct sd_va_env *env,
			 sd_u32 gpu, const struct sd_uvm_map_head *h, const struct sd_uvm_map_tail *t)
{
	sd_u64 end = h->base + h->length - 1;
	struct sd_dup_info info;
	struct sd_va_map *m;
	struct sd_va_dup *d;
	sd_u32 st, hdup = 0;

	st = unmap_in(s, r, env, gpu, h->base, end);
	if (st != SD_NV_OK)
		return st;
	m = sd_zalloc(sizeof(*m));
	d = m ? sd_zalloc(sizeof(*d)) : 0;
	if (!d) {
		sd_free(m);
		return SD_NV_ERR_NO_MEMORY;
	}
	/*
	 * The duplicate: it checks the handles and keeps the memory while mapped. Its
	 * handle starts 0 and, as nvidia-uvm's error path does (uvm_ext_gpu_map_destroy),
	 * whatever the call left there is freed when it failed.
	 */
	st = env->dup(env->ctx, gpu, t->hClient, t->hMemory, &hdup, &info);
	if (st != SD_NV_OK) {
		if (hdup)
			env->free_dup(env->ctx, gpu, hdup);
		sd_free(d);
		sd_free(m);
		return st;
	}
	d->refs = 1;
	d->gpu = gpu;
	d->hdup = hdup;
	/* set_ext_gpu_map_location: the owner registered, and the mapping GPU itself. */
	if (!info.device_descendant && !info.sysmem)
		st = SD_NV_ERR_INVALID_DEVICE;		/* fabric memory: not served */
	else if (!registered(s, info.gpu) || (!info.sysmem && info.gpu != gpu))
		st = SD_NV_ERR_INVALID_DEVICE;
	else if (!(m->page = mapping_page_size(info.page_size | h->base | h->length | h->offset)))
		st = SD_NV_ERR_INVALID_ADDRESS;
	else if (h->offset > info.size || h->length > info.size - h->offset)
		st = SD_NV_ERR_INVALID_OFFSET;
	else
		st = tables_get(s, env, gpu, h->base, end, m->page);
	if (st != SD_NV_OK) {
		dup_put(env, d);
		sd_free(m);
		return st;
	}
	m->start = h->base;
	m->end = end;
	m->gpu = gpu;
	m->dup = d;
	m->next = r->maps;
	r->maps = m;
	return SD_NV_OK;
}

sd_u32 sd_va_map(struct sd_va_space *s, const struct sd_va_env *env,
		 const struct sd_uvm_map_head *h, const struct sd_uvm_gpu_mapping *attrs,
		 sd_u32 max, const struct sd_uvm_map_tail *t)
{
	struct sd_va_range *r;
	sd_u32 i, st = SD_NV_OK, mapped = 0;
	int g;

	if (range_invalid_4k(h->base, h->length))
		return SD_NV_ERR_INVALID_ADDRESS;
	if (t->gpuAttributesCount == 0 || t->gpuAttributesCount > max)
		return SD_NV_ERR_INVALID_ARGUMENT;
	r = find_range(s, h->base);
	if (!r || r->end < h->base + h->length - 1)
		return SD_NV_ERR_INVALID_ADDRESS;
	for (i = 0; i < t->gpuAttributesCount; i++) {
		const struct sd_uvm_gpu_mapping *a = &attrs[i];

		/* Only the default format, element size and compression are served. */
		if (a->gpuMappingType > SD_UVM_MAPPING_TYPE_MAX ||
		    a->gpuCachingType > SD_UVM_CACHING_TYPE_MAX || a->gpuFormatType ||
		    a->gpuElementBits || a->gpuCompressionType) {
			st = SD_NV_ERR_INVALID_ARGUMENT;
			break;
		}
		g = sd_gpu_of_uuid(a->gpuUuid, env->ngpus);
		if (g < 0 || !registered(s, (sd_u32)g)) {
			st = SD_NV_ERR_INVALID_DEVICE;
			break;
		}
		st = map_on_gpu(s, r, env, (sd_u32)g, h, t);
		if (st != SD_NV_OK)
			break;
		mapped |= 1u << g;
	}
	if (st != SD_NV_OK)
		/* Only what this call mapped goes: whole mappings, nothing split. */
		for (g = 0; g < (int)env->ngpus; g++)
			if ((mapped >> g) & 1)
				unmap_in(s, r, env, (sd_u32)g, h->base, h->base + h->length - 1);
	return st;
}

/*
 * uvm_map_external_sparse: a 64 KiB-aligned span of an external range on a registered
 * GPU, whatever is mapped there on that GPU unmapped first; a mapping of no memory, its
 * tables at 64 KiB pages over the whole span (uvm_map_external_sparse_on_gpu's
 * uvm_page_table_range_vec_init at UVM_PAGE_SIZE_64K). Not modelled: GPUs before
 * Pascal, which have none (NV_ERR_INVALID_DEVICE), and uvm_gpu_can_address.
 */
sd_u32 sd_va_map_sparse(struct sd_va_space *s, const struct sd_va_env *env,
			const struct sd_uvm_map_external_sparse *p)
{
	sd_u64 end = p->base + p->length - 1;
	struct sd_va_range *r;
	sd_u32 st;
	int g;

	if (range_invalid_64k(p->base, p->length))
		return SD_NV_ERR_INVALID_ADDRESS;
	r = find_range(s, p->base);
	if (!r || r->end < end)
		return SD_NV_ERR_INVALID_ADDRESS;
	g = sd_gpu_of_uuid(p->gpuUuid, env->ngpus);
	if (g < 0 || !registered(s, (sd_u32)g))
		return SD_NV_ERR_INVALID_DEVICE;
	st = unmap_in(s, r, env, (sd_u32)g, p->base, end);
	if (st != SD_NV_OK)
		return st;
	return map_nothing(s, r, env, (sd_u32)g, p->base, end, SD_PAGE_BIG);
}

static void range_destroy(struct sd_va_space *s, struct sd_va_range *r, const struct sd_va_env *env)
{
	struct sd_va_map *m;

	while ((m = r->maps)) {
		r->maps = m->next;
		tables_put(s, env, m);
		dup_put(env, m->dup);
		sd_free(m);
	}
	sd_free(r);
}

/* r out of the va_space and destroyed. */
static void range_drop(struct sd_va_space *s, struct sd_va_range *r, const struct sd_va_env *env)
{
	struct sd_va_range **pp = &s->ranges;

	while (*pp != r)
		pp = &(*pp)->next;
	*pp = r->next;
	range_destroy(s, r, env);
}

sd_u32 sd_va_free(struct sd_va_space *s, const struct sd_va_env *env, sd_u64 base, sd_u64 length)
{
	struct sd_va_range *r;

	if (range_invalid_4k(base, length))
		return SD_NV_ERR_INVALID_ADDRESS;
	for (r = s->ranges; r; r = r->next)
		if (r->start <= base && base <= r->end)
			break;
	/* A partial free of a range that is not split is an error (uvm_free). */
	if (!r || r->start != base || r->end != base + length - 1)
		return SD_NV_ERR_INVALID_ADDRESS;
	range_drop(s, r, env);
	return SD_NV_OK;
}

/*
 * uvm_map_sked_reflected_range: the GPU's (registered, with a GPU VA space: else
 * NV_ERR_INVALID_DEVICE), then one GPU page (its length 4 KiB, 64 KiB or 2 MiB, the
 * address aligned to it: else NV_ERR_INVALID_ADDRESS), a range of its own, its tables
 * at that page size; on their failure the range goes. Not modelled: uvm_gpu_can_address.
 */
sd_u32 sd_va_map_dp_region(struct sd_va_space *s, const struct sd_va_env *env,
			   const struct sd_uvm_map_dp_region *p)
{
	sd_u64 end = p->base + p->length - 1;
	struct sd_va_range *r;
	sd_u32 st;
	int g;

	if (range_invalid_4k(p->base, p->length))
		return SD_NV_ERR_INVALID_ADDRESS;
	g = sd_gpu_of_uuid(p->gpuUuid, env->ngpus);
	if (g < 0 || !registered(s, (sd_u32)g) || !s->gpu_va_space[g])
		return SD_NV_ERR_INVALID_DEVICE;
	if ((p->length != SD_PAGE_4K && p->length != SD_PAGE_BIG && p->length != SD_PAGE_HUGE) ||
	    (p->base & (p->length - 1)))
		return SD_NV_ERR_INVALID_ADDRESS;
	st = range_make(s, p->base, end, SD_VA_SKED, &r);
	if (st != SD_NV_OK)
		return st;
	st = map_nothing(s, r, env, (sd_u32)g, p->base, end, p->length);
	if (st != SD_NV_OK)
		range_drop(s, r, env);
	return st;
}

/*
 * The semaphore pools' mappings on gpu's GPU VA space, at 4 KiB pages
 * (uvm_mem_map_gpu_user of their system memory); on a failure those made go.
 */
static sd_u32 pools_map(struct sd_va_space *s, const struct sd_va_env *env, sd_u32 gpu)
{
	struct sd_va_range *r;
	sd_u32 st = SD_NV_OK;

	for (r = s->ranges; r && st == SD_NV_OK; r = r->next)
		if (r->kind == SD_VA_POOL)
			st = map_nothing(s, r, env, gpu, r->start, r->end, SD_PAGE_4K);
	if (st != SD_NV_OK)
		for (r = s->ranges; r; r = r->next)
			if (r->kind == SD_VA_POOL)
				unmap_in(s, r, env, gpu, 0, ~0ULL);
	return st;
}

/*
 * uvm_api_alloc_semaphore_pool: page-aligned (else NV_ERR_INVALID_ADDRESS), at most max
 * attributes (else NV_ERR_INVALID_ARGUMENT), each of a registered GPU (else
 * NV_ERR_INVALID_DEVICE) and served types; a range of its own, mapped on each GPU with
 * a GPU VA space; on a failure the range goes with what it mapped.
 */
sd_u32 sd_va_alloc_pool(struct sd_va_space *s, const struct sd_va_env *env,
			const struct sd_uvm_pool_head *h, const struct sd_uvm_gpu_mapping *attrs,
			sd_u32 max, const struct sd_uvm_pool_tail *t)
{
	struct sd_va_range *r;
	sd_u32 i, st;
	int g;

	if (range_invalid_4k(h->base, h->length))
		return SD_NV_ERR_INVALID_ADDRESS;
	if (t->gpuAttributesCount > max)
		return SD_NV_ERR_INVALID_ARGUMENT;
	for (i = 0; i < t->gpuAttributesCount; i++) {
		if (attrs[i].gpuMappingType > SD_UVM_MAPPING_TYPE_MAX ||
		    attrs[i].gpuCachingType > SD_UVM_CACHING_TYPE_MAX)
			return SD_NV_ERR_INVALID_ARGUMENT;
		g = sd_gpu_of_uuid(attrs[i].gpuUuid, env->ngpus);
		if (g < 0 || !registered(s, (sd_u32)g))
			return SD_NV_ERR_INVALID_DEVICE;
	}
	st = range_make(s, h->base, h->base + h->length - 1, SD_VA_POOL, &r);
	if (st != SD_NV_OK)
		return st;
	for (g = 0; g < (int)env->ngpus; g++) {
		if (!s->gpu_va_space[g])
			continue;
		st = map_nothing(s, r, env, (sd_u32)g, r->start, r->end, SD_PAGE_4K);
		if (st != SD_NV_OK) {
			range_drop(s, r, env);
			return st;
		}
	}
	return SD_NV_OK;
}

sd_u32 sd_va_create_managed(struct sd_va_space *s, const struct sd_va_env *env, sd_u64 base,
			    sd_u64 length)
{
	sd_u64 end = base + length - 1;
	struct sd_va_span *m;

	if (range_invalid_4k(base, length))
		return SD_NV_ERR_INVALID_ADDRESS;
	if (range_in_use(s, base, end))
		return SD_NV_ERR_UVM_ADDRESS_IN_USE;
	m = sd_zalloc(sizeof(*m));
	if (!m)
		return SD_NV_ERR_NO_MEMORY;
	/* A mmap over pageable memory replaces it: what a GPU held of it goes. */
	span_cut(&s->resident, env, base, end, ~0u, 1);
	m->start = base;
	m->end = end;
	m->next = s->managed;
	s->managed = m;
	return SD_NV_OK;
}

void sd_va_unmap_managed(struct sd_va_space *s, const struct sd_va_env *env, sd_u64 base,
			 sd_u64 length)
{
	sd_u64 end = base + length - 1;

	if (!length || end < base)
		return;
	span_cut(&s->managed, env, base, end, ~0u, 0);
	span_cut(&s->resident, env, base, end, ~0u, 1);
}

/*
 * uvm_api_migrate: page-aligned, to the CPU (the zero UUID) or a registered GPU (else
 * NV_ERR_INVALID_DEVICE), of managed ranges only unless HMM is on (else
 * NV_ERR_INVALID_ADDRESS); what GPUs held of the span goes, then the destination GPU
 * takes it all (NV_ERR_NO_MEMORY: it stays on the CPU). The stand-in serves no flag.
 */
sd_u32 sd_va_migrate(struct sd_va_space *s, const struct sd_va_env *env,
		     const struct sd_uvm_migrate *p)
{
	static const sd_u8 cpu[SD_UUID_LEN];
	sd_u64 end = p->base + p->length - 1;
	struct sd_va_span *r;
	int g = -1;

	if (p->flags)
		return SD_NV_ERR_INVALID_ARGUMENT;
	if (range_invalid_4k(p->base, p->length))
		return SD_NV_ERR_INVALID_ADDRESS;
	if (__builtin_memcmp(p->destinationUuid, cpu, SD_UUID_LEN)) {
		g = sd_gpu_of_uuid(p->destinationUuid, env->ngpus);
		if (g < 0 || !registered(s, (sd_u32)g))
			return SD_NV_ERR_INVALID_DEVICE;
	}
	if (span_overlap(s->managed, p->base, end) != p->length && !sd_va_pageable(s))
		return SD_NV_ERR_INVALID_ADDRESS;
	if (find_range_in(s, p->base, end))
		return SD_NV_ERR_INVALID_ADDRESS;
	span_cut(&s->resident, env, p->base, end, ~0u, 1);
	if (g < 0)
		return SD_NV_OK;
	r = sd_zalloc(sizeof(*r));
	if (!r)
		return SD_NV_ERR_NO_MEMORY;
	if (env->pages(env->ctx, (sd_u32)g, p->length, 1) != SD_NV_OK) {
		sd_free(r);
		return SD_NV_ERR_NO_MEMORY;
	}
	r->start = p->base;
	r->end = end;
	r->gpu = (sd_u32)g;
	r->next = s->resident;
	s->resident = r;
	return SD_NV_OK;
}

void sd_va_destroy(struct sd_va_space *s, const struct sd_va_env *env)
{
	struct sd_va_range *r;
	sd_u32 g;

	span_cut(&s->resident, env, 0, ~0ULL, ~0u, 1);
	span_cut(&s->managed, env, 0, ~0ULL, ~0u, 0);

	while ((r = s->ranges)) {
		s->ranges = r->next;
		range_destroy(s, r, env);
	}
	for (g = 0; g < 32; g++)
		destroy_gpu_va_space(s, env, g);
	s->registered = 0;
}
