// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The rules follow NVIDIA's open kernel source (kernel-open/nvidia/nv.c: nvidia_ioctl;
 * src/nvidia/arch/nvalloc/unix/src/escape.c: RmIoctl; the resource server and the
 * memory classes); docs/sim.md lists what is and is not modelled.
 */
#include "rm.h"
#include "vaspace.h"

#define PCI_VENDOR_NVIDIA	0x10de
#define PCI_DEVICE_T4		0x1eb8

static int is_ctl(const struct sd_file *f)
{
	return f->minor == SD_CTL_MINOR;
}

/* Parses "N.N[.N]" into three numbers; -1 if anything else. */
static int parse_version(const char *s, sd_u32 v[3])
{
	int i = 0, digits = 0;

	v[0] = v[1] = v[2] = 0;
	for (; *s; s++) {
		if (*s >= '0' && *s <= '9') {
			if (v[i] > 99999)
				return -1;
			v[i] = v[i] * 10 + (sd_u32)(*s - '0');
			digits++;
		} else if (*s == '.' && digits && i < 2) {
			i++;
			digits = 0;
		} else {
			return -1;
		}
	}
	return digits && i >= 1 ? 0 : -1;
}

int sd_version_at_least(const char *a, sd_u32 major, sd_u32 minor, sd_u32 patch)
{
	sd_u32 v[3];

	if (parse_version(a, v))
		return 0;
	if (v[0] != major)
		return v[0] > major;
	if (v[1] != minor)
		return v[1] > minor;
	return v[2] >= patch;
}

sd_u32 sd_gpu_id(sd_u32 gpu)
{
	return (0x10 + gpu) << 8;
}

enum sd_rc sd_node_init(struct sd_node *n, sd_u32 ngpus, sd_u64 mem_bytes, const char *version)
{
	sd_u32 v[3], i;
	unsigned long len = 0;

	while (version[len] && len < SD_VERSION_STRING_LENGTH)
		len++;
	if (ngpus < 1 || ngpus > SD_MAX_GPUS || mem_bytes == 0 ||
	    len >= SD_VERSION_STRING_LENGTH || parse_version(version, v))
		return SD_RC_INVAL;
	__builtin_memset(n, 0, sizeof(*n));
	n->ngpus = ngpus;
	for (i = 0; i < ngpus; i++)
		n->total[i] = mem_bytes;
	__builtin_memcpy(n->version, version, len);
	/* numaNode was appended to NV_MEMORY_ALLOCATION_PARAMS in 545.23.06. */
	n->memparams_size = sd_version_at_least(version, 545, 23, 6) ?
		SD_MEMPARAMS_SIZE_NEW : SD_MEMPARAMS_SIZE_OLD;
	return SD_OK;
}

void sd_file_init(struct sd_file *f, struct sd_node *n, sd_u32 minor)
{
	__builtin_memset(f, 0, sizeof(*f));
	f->node = n;
	f->minor = minor;
}

/* Who f is in RM: the control file it registered to (NV_ESC_REGISTER_FD), else itself. */
static const struct sd_file *rm_identity(const struct sd_file *f)
{
	return f->ctl ? f->ctl : f;
}

static struct sd_client *find_client(const struct sd_node *n, sd_u32 h)
{
	struct sd_client *c;

	for (c = n->clients; c; c = c->next)
		if (c->handle == h)
			return c;
	return 0;
}

/* A video-memory object (or a duplicate of one): not a channel's own memory. */
static int is_vidmem(const struct sd_obj *o)
{
	return o->mem && !o->mem->internal && !o->mem->sysmem;
}

static int is_sysmem(const struct sd_obj *o)
{
	return o->mem && o->mem->sysmem;
}

static struct sd_obj *find_obj(const struct sd_client *c, sd_u32 h)
{
	struct sd_obj *o;

	for (o = c->objs; o; o = o->next)
		if (o->handle == h)
			return o;
	return 0;
}

/*
 * o, already off its client's list, lets go of its memory: the GPU gets the memory back
 * with its last name, else its listing moves to an object still naming it, a process's
 * before the driver's own (a dma-buf's): a process is listed with what it still names.
 */
static void put_mem(struct sd_node *n, const struct sd_obj *o)
{
	struct sd_mem *m = o->mem;
	const struct sd_client *c;
	const struct sd_obj *q;
	int drivers;

	if (!m)
		return;
	if (--m->refs == 0) {
		n->used[m->gpu] -= m->held;
		sd_free(m);
		return;
	}
	if (m->listed != o)
		return;
	for (drivers = 0; drivers < 2; drivers++)
		for (c = n->clients; c; c = c->next) {
			if ((c->file == 0) != drivers)
				continue;
			for (q = c->objs; q; q = q->next)
				if (q->mem == m) {
					m->listed = q;
					return;
				}
		}
}

/* o, off its client's list, freed: its memory let go, a device's VA space with it. */
static void drop_obj(struct sd_node *n, struct sd_obj *o)
{
	put_mem(n, o);
	if (o->vas) {
		n->used[o->vas->gpu] -= o->vas->held;
		sd_free(o->vas);
	}
	sd_free(o);
}

/* Frees root and everything under it, giving back the physical memory it held. */
static void free_subtree(struct sd_node *n, struct sd_client *c, struct sd_obj *root)
{
	struct sd_obj **pp, *o, *a;

	/* Marked first: the ancestor walks need every parent still allocated. */
	for (o = c->objs; o; o = o->next) {
		for (a = o; a && a != root; a = a->parent)
			;
		o->doomed = a == root;
	}
	/* A VA range goes with the VA space it is in (it has no children). */
	for (o = c->objs; o; o = o->next)
		if (o->space && o->space->doomed)
			o->doomed = 1;
	pp = &c->objs;
	while ((o = *pp)) {
		if (!o->doomed) {
			pp = &o->next;
			continue;
		}
		*pp = o->next;
		drop_obj(n, o);
	}
}

static void free_client(struct sd_node *n, struct sd_client *c)
{
	struct sd_client **pp;
	struct sd_obj *o;

	while ((o = c->objs)) {
		c->objs = o->next;
		drop_obj(n, o);
	}
	for (pp = &n->clients; *pp != c; pp = &(*pp)->next)
		;
	*pp = c->next;
	sd_free(c);
}

void sd_gpu_clients(const struct sd_node *n, sd_u32 gpu,
		    void (*emit)(void *arg, sd_u32 pid, sd_u64 bytes), void *arg)
{
	const struct sd_client *c;
	const struct sd_obj *o;
	sd_u64 bytes;

	for (c = n->clients; c; c = c->next) {
		bytes = 0;
		for (o = c->objs; o; o = o->next)
			if (is_vidmem(o) && o->mem->listed == o && o->mem->gpu == gpu)
				bytes += o->mem->bytes;
		if (bytes)
			emit(arg, c->pid, bytes);
	}
}

void sd_file_release(struct sd_file *f)
{
	struct sd_node *n = f->node;
	struct sd_client *c, *next;

	for (c = n->clients; c; c = next) {
		next = c->next;
		if (c->file == f)
			free_client(n, c);
	}
	sd_free(f->attached);
	f->attached = 0;
	f->nattached = 0;
}

/*
 * The page size RM picks from the attributes: what is asked for, else 2 MiB pages
 * for an allocation of 2 MiB or more, 64 KiB pages for 64 KiB or more, else 4 KiB.
 */
static sd_u64 page_size(const struct sd_memory_alloc *m, sd_u32 *field)
{
	sd_u32 ps = (m->attr >> SD_ATTR_PAGE_SIZE_SHIFT) & SD_ATTR_PAGE_SIZE_MASK;

	if (ps == SD_ATTR_PAGE_SIZE_DEFAULT)
		ps = m->size >= SD_PAGE_HUGE ? SD_ATTR_PAGE_SIZE_HUGE :
			m->size >= SD_PAGE_BIG ? SD_ATTR_PAGE_SIZE_BIG : SD_ATTR_PAGE_SIZE_4KB;
	*field = ps;
	if (ps == SD_ATTR_PAGE_SIZE_4KB)
		return SD_PAGE_4K;
	if (ps == SD_ATTR_PAGE_SIZE_BIG)
		return SD_PAGE_BIG;
	return ((m->attr2 >> SD_ATTR2_PAGE_SIZE_HUGE_SHIFT) & SD_ATTR2_PAGE_SIZE_HUGE_MASK) ==
		SD_ATTR2_PAGE_SIZE_HUGE_512MB ? SD_PAGE_512M : SD_PAGE_HUGE;
}

/* The checks of stdmemValidateParams that need no state, for every memory class. */
static sd_u32 check_std(const struct sd_memory_alloc *m)
{
	if (m->internalflags != 0)
		return SD_NV_ERR_INVALID_ARGUMENT;
	if (m->owner == 0 || m->owner == 0xffffffffu)
		return SD_NV_ERR_INVALID_OWNER;
	if (!(m->flags & SD_ALLOC_FLAGS_USE_BEGIN_END) && (m->rangeLo || m->rangeHi))
		return SD_NV_ERR_INVALID_ARGUMENT;
	return SD_NV_OK;
}

/*
 * Memory of m's size (not 0) in whole pages of pg bytes, the page size's attribute
 * field, as the driver hands them back.
 */
static sd_u32 take_pages(struct sd_memory_alloc *m, sd_u64 pg, sd_u32 field)
{
	if (m->size == 0)
		return SD_NV_ERR_INVALID_ARGUMENT;
	/* Rounding up must not wrap. */
	if (m->size > ~0ULL - (pg - 1))
		return SD_NV_ERR_NO_MEMORY;
	m->size = (m->size + pg - 1) & ~(pg - 1);
	m->limit = m->size - 1;
	m->address = 0;
	m->attr = (m->attr & ~(SD_ATTR_PAGE_SIZE_MASK << SD_ATTR_PAGE_SIZE_SHIFT)) |
		(field << SD_ATTR_PAGE_SIZE_SHIFT);
	return SD_NV_OK;
}

/*
 * The checks of vidmemConstruct that need no state, then the size in whole pages; on
 * success m holds what the driver hands back.
 */
static sd_u32 check_memory(struct sd_memory_alloc *m)
{
	sd_u32 field, st;
	sd_u64 pg;

	st = check_std(m);
	if (st != SD_NV_OK)
		return st;
	if (((m->attr >> SD_ATTR_LOCATION_SHIFT) & SD_ATTR_LOCATION_MASK) != SD_ATTR_LOCATION_VIDMEM ||
	    (m->flags & SD_ALLOC_FLAGS_VIRTUAL))
		return SD_NV_ERR_INVALID_ARGUMENT;
	pg = page_size(m, &field);
	return take_pages(m, pg, field);
}

/*
 * The checks of sysmemConstruct and sysmemInitAllocRequest that need no state (neither
 * video memory nor virtual, no VA space), then the size in whole 4 KiB pages. Not
 * modelled: big and huge pages of system memory (RM makes it contiguous then), refused
 * as unsupported.
 */
static sd_u32 check_sysmem(struct sd_memory_alloc *m)
{
	sd_u32 ps = (m->attr >> SD_ATTR_PAGE_SIZE_SHIFT) & SD_ATTR_PAGE_SIZE_MASK;
	sd_u32 st = check_std(m);

	if (st != SD_NV_OK)
		return st;
	if (((m->attr >> SD_ATTR_LOCATION_SHIFT) & SD_ATTR_LOCATION_MASK) == SD_ATTR_LOCATION_VIDMEM ||
	    (m->flags & SD_ALLOC_FLAGS_VIRTUAL) || m->hVASpace)
		return SD_NV_ERR_INVALID_ARGUMENT;
	if (ps != SD_ATTR_PAGE_SIZE_DEFAULT && ps != SD_ATTR_PAGE_SIZE_4KB)
		return SD_NV_ERR_NOT_SUPPORTED;
	return take_pages(m, SD_PAGE_4K, SD_ATTR_PAGE_SIZE_4KB);
}

/*
 * The checks of stdmemValidateParams and virtmemConstruct for a VA range that need no
 * state, then its size in whole big pages; on success m holds what the driver hands back.
 */
static sd_u32 check_range(struct sd_memory_alloc *m)
{
	if (m->internalflags != 0)
		return SD_NV_ERR_INVALID_ARGUMENT;
	if (m->owner == 0 || m->owner == 0xffffffffu)
		return SD_NV_ERR_INVALID_OWNER;
	if (!(m->flags & SD_ALLOC_FLAGS_VIRTUAL) || m->size == 0)
		return SD_NV_ERR_INVALID_ARGUMENT;
	if (m->size > ~0ULL - (SD_RANGE_ALIGN - 1))
		return SD_NV_ERR_NO_MEMORY;
	m->size = (m->size + SD_RANGE_ALIGN - 1) & ~(SD_RANGE_ALIGN - 1);
	m->limit = m->size - 1;
	return SD_NV_OK;
}

sd_u64 sd_range_tables(sd_u64 size)
{
	static const struct { sd_u32 shift, bytes; } level[] = {
		{ 21, 4096 }, { 21, 256 }, { 29, 4096 }, { 38, 4096 }, { 47, 4096 },
	};
	sd_u64 sum = 0;
	unsigned int i;

	for (i = 0; i < sizeof(level) / sizeof(level[0]); i++)
		sum += ((size + (1ULL << level[i].shift) - 1) >> level[i].shift) * level[i].bytes;
	return sum;
}

/* A free client handle from base on (RM's RS_CLIENT_HANDLE_BASE or _INTERNAL_HANDLE_BASE). */
static sd_u32 new_client_handle(struct sd_node *n, sd_u32 base, sd_u32 *seq, sd_u32 *h)
{
	sd_u32 i;

	for (i = 0; i < SD_CLIENT_HANDLE_RANGE; i++) {
		sd_u32 cand = base + ((*seq)++ % SD_CLIENT_HANDLE_RANGE);

		if (!find_client(n, cand)) {
			*h = cand;
			return SD_NV_OK;
		}
	}
	return SD_NV_ERR_INSUFFICIENT_RESOURCES;
}

static sd_u32 new_obj_handle(struct sd_node *n, const struct sd_client *c, sd_u32 *h)
{
	sd_u32 i;

	for (i = 0; i < SD_OBJ_HANDLE_RANGE; i++) {
		sd_u32 cand = SD_OBJ_HANDLE_BASE + (n->obj_seq++ % SD_OBJ_HANDLE_RANGE);

		if (cand != c->handle && !find_obj(c, cand)) {
			*h = cand;
			return SD_NV_OK;
		}
	}
	return SD_NV_ERR_INSUFFICIENT_RESOURCES;
}

/* A new object's handle in c: *h as asked (clientValidateNewResourceHandle), or made when 0. */
static sd_u32 take_obj_handle(struct sd_node *n, const struct sd_client *c, sd_u32 *h)
{
	if (*h == 0)
		return new_obj_handle(n, c, h);
	if (*h == c->handle)
		return SD_NV_ERR_INVALID_OBJECT_HANDLE;
	if (find_obj(c, *h))
		return SD_NV_ERR_INSERT_DUPLICATE_NAME;
	return SD_NV_OK;
}

/* A new object under parent (NULL: the client) of c; linked first in c's list. */
static struct sd_obj *new_obj(struct sd_client *c, struct sd_obj *parent, sd_u32 h, sd_u32 cls,
			      sd_u32 gpu)
{
	struct sd_obj *o = sd_zalloc(sizeof(*o));

	if (!o)
		return 0;
	o->handle = h;
	o->cls = cls;
	o->gpu = gpu;
	o->parent = parent;
	o->next = c->objs;
	c->objs = o;
	return o;
}

/* c's first object of class cls on gpu, or NULL. */
static struct sd_obj *first_on_gpu(struct sd_client *c, sd_u32 cls, sd_u32 gpu)
{
	struct sd_obj *o;

	for (o = c->objs; o && (o->cls != cls || o->gpu != gpu); o = o->next)
		;
	return o;
}

/* A duplicate: a new object h of c under parent, naming so's memory (one more name). */
static struct sd_obj *name_mem(struct sd_client *c, struct sd_obj *parent, sd_u32 h,
			       const struct sd_obj *so)
{
	struct sd_obj *o = new_obj(c, parent, h, so->cls, parent->gpu);

	if (o) {
		o->mem = so->mem;
		o->mem->refs++;
	}
	return o;
}

/* A new client h on the node's list: file NULL and pid 0 for one of the driver's own. */
static struct sd_client *new_client(struct sd_node *n, sd_u32 h, const struct sd_file *file, sd_u32 pid)
{
	struct sd_client *c = sd_zalloc(sizeof(*c));

	if (!c)
		return 0;
	c->handle = h;
	c->pid = pid;
	c->file = file;
	c->next = n->clients;
	n->clients = c;
	return c;
}

static sd_u32 alloc_client(struct sd_file *f, sd_u32 pid, sd_u32 *hnew)
{
	struct sd_node *n = f->node;
	sd_u32 h = *hnew, st;

	if (h == 0) {
		st = new_client_handle(n, SD_CLIENT_HANDLE_BASE, &n->client_seq, &h);
		if (st != SD_NV_OK)
			return st;
	} else if (find_client(n, h)) {
		return SD_NV_ERR_INSERT_DUPLICATE_NAME;
	}
	if (!new_client(n, h, rm_identity(f), pid))
		return SD_NV_ERR_NO_MEMORY;
	*hnew = h;
	return SD_NV_OK;
}

union sd_class_params {
	struct sd_nv0080_alloc dev;
	struct sd_nv2080_alloc sub;
	struct sd_memory_alloc mem;
	struct sd_channel_group_alloc group;
	struct sd_channel_alloc_head channel;
	struct sd_vaspace_alloc vaspace;
};

/* What one RM_ALLOC of a non-client class asks for, fetched and checked before the lock. */
struct sd_alloc_req {
	sd_u32 hRoot, hParent, hNew, cls;
	union sd_class_params p;
	int gpu_open;		/* for NV01_DEVICE_0: the caller holds /dev/nvidia<deviceId> */
};

/* Memory the driver holds for itself (a channel's, a group's, a VA space's): bytes of it. */
static struct sd_mem *internal_mem(sd_u64 bytes)
{
	struct sd_mem *m = sd_zalloc(sizeof(*m));

	if (m) {
		m->internal = 1;
		m->bytes = bytes;
		m->held = bytes;
	}
	return m;
}

/*
 * The VA space device dev of c takes for an object that names none
 * (deviceGetDefaultVASpace, device_share.c: made on first use, not with the device):
 * with hClientShare 0 the GPU's global one, nothing new; with the device's own client a
 * new one, holding a page directory (*ours*: SD_VASPACE_HELD, in the GPU's used figure
 * and in no process's), which goes with the device. Not modelled: another client's,
 * which RM shares (NV_ERR_NOT_SUPPORTED here). Under the node's lock.
 */
static sd_u32 device_vas(struct sd_node *n, const struct sd_client *c, struct sd_obj *dev)
{
	struct sd_mem *m;

	if (!dev->share || dev->vas)
		return SD_NV_OK;
	if (dev->share != c->handle)
		return SD_NV_ERR_NOT_SUPPORTED;
	if (SD_VASPACE_HELD > n->total[dev->gpu] - n->used[dev->gpu])
		return SD_NV_ERR_NO_MEMORY;
	m = internal_mem(SD_VASPACE_HELD);
	if (!m)
		return SD_NV_ERR_NO_MEMORY;
	m->refs = 1;
	m->gpu = dev->gpu;
	dev->vas = m;
	n->used[dev->gpu] += m->held;
	return SD_NV_OK;
}

/* Under the node's lock. */
static sd_u32 alloc_object(struct sd_file *f, struct sd_alloc_req *r)
{
	struct sd_node *n = f->node;
	struct sd_client *c = find_client(n, r->hRoot);
	struct sd_obj *parent = 0, *o;
	const struct sd_obj *space = 0;
	struct sd_mem *m = 0;
	sd_u32 h = r->hNew, gpu, st, field;

	/* Another file's client is as unknown as a missing one. */
	if (!c || c->file != rm_identity(f))
		return SD_NV_ERR_INVALID_CLIENT;
	if (r->hParent != c->handle) {
		parent = find_obj(c, r->hParent);
		if (!parent)
			return SD_NV_ERR_INVALID_OBJECT_PARENT;
	}
	st = take_obj_handle(n, c, &h);
	if (st != SD_NV_OK)
		return st;
	switch (r->cls) {
	case SD_NV01_DEVICE_0:
		if (parent)
			return SD_NV_ERR_INVALID_OBJECT_PARENT;
		if (r->p.dev.deviceId >= n->ngpus)
			return SD_NV_ERR_INVALID_ARGUMENT;
		/* One device of a GPU a client (deviceInit: "device inst already allocated"). */
		if (first_on_gpu(c, SD_NV01_DEVICE_0, r->p.dev.deviceId))
			return SD_NV_ERR_INSUFFICIENT_RESOURCES;
		if (!r->gpu_open)
			return SD_NV_ERR_INSUFFICIENT_PERMISSIONS;
		gpu = r->p.dev.deviceId;
		break;
	case SD_NV20_SUBDEVICE_0:
		if (!parent || parent->cls != SD_NV01_DEVICE_0)
			return SD_NV_ERR_INVALID_OBJECT_PARENT;
		/* One GPU per device: subdevice 0 only. */
		if (r->p.sub.subDeviceId != 0)
			return SD_NV_ERR_INVALID_ARGUMENT;
		gpu = parent->gpu;
		break;
	case SD_KEPLER_CHANNEL_GROUP_A:
	case SD_TURING_CHANNEL_GPFIFO_A:
		/* A group under a device; a channel under a device or in a group. */
		if (!parent || (parent->cls != SD_NV01_DEVICE_0 &&
				(r->cls == SD_KEPLER_CHANNEL_GROUP_A ||
				 parent->cls != SD_KEPLER_CHANNEL_GROUP_A)))
			return SD_NV_ERR_INVALID_OBJECT_PARENT;
		/*
		 * A group that names no VA space takes its device's (kchangrpapiConstruct:
		 * vaspaceGetByHandleOrDeviceDefault), unless the device has many. Not
		 * modelled: a channel in no group, whose VA space RM takes the same way.
		 */
		if (r->cls == SD_KEPLER_CHANNEL_GROUP_A && !r->p.group.hVASpace &&
		    parent->vamode != SD_DEVICE_VAMODE_MULTIPLE_VASPACES) {
			st = device_vas(n, c, parent);
			if (st != SD_NV_OK)
				return st;
		}
		gpu = parent->gpu;
		m = internal_mem(r->cls == SD_KEPLER_CHANNEL_GROUP_A ? SD_GROUP_HELD : SD_CHANNEL_HELD);
		if (!m)
			return SD_NV_ERR_NO_MEMORY;
		break;
	case SD_FERMI_VASPACE_A:
		if (!parent || (parent->cls != SD_NV01_DEVICE_0 && parent->cls != SD_NV20_SUBDEVICE_0))
			return SD_NV_ERR_INVALID_OBJECT_PARENT;
		gpu = parent->gpu;
		m = internal_mem(SD_VASPACE_HELD);
		if (!m)
			return SD_NV_ERR_NO_MEMORY;
		break;
	case SD_NV50_MEMORY_VIRTUAL:
		/*
		 * Under a device only (resource_list.h); in the VA space named, else its
		 * device's (vaspaceGetByHandleOrDeviceDefault); the page tables it pins are the
		 * driver's own memory, in the GPU's used figure and in no process's; the
		 * object's size is the range's.
		 */
		if (!parent || parent->cls != SD_NV01_DEVICE_0)
			return SD_NV_ERR_INVALID_OBJECT_PARENT;
		gpu = parent->gpu;
		if (r->p.mem.hVASpace) {
			space = find_obj(c, r->p.mem.hVASpace);
			if (!space)
				return SD_NV_ERR_OBJECT_NOT_FOUND;
			if (space->cls != SD_FERMI_VASPACE_A || space->gpu != gpu)
				return SD_NV_ERR_INVALID_OBJECT_HANDLE;
		} else {
			st = device_vas(n, c, parent);
			if (st != SD_NV_OK)
				return st;
		}
		m = internal_mem(r->p.mem.flags & (SD_ALLOC_FLAGS_LAZY | SD_ALLOC_FLAGS_EXTERNALLY_MANAGED) ?
				 0 : sd_range_tables(r->p.mem.size));
		if (!m)
			return SD_NV_ERR_NO_MEMORY;
		m->bytes = r->p.mem.size;
		break;
	case SD_NV01_MEMORY_SYSTEM:
	default: /* SD_NV01_MEMORY_LOCAL_USER; sized and checked by check_memory, check_sysmem */
		if (!parent || (parent->cls != SD_NV01_DEVICE_0 && parent->cls != SD_NV20_SUBDEVICE_0))
			return SD_NV_ERR_INVALID_OBJECT_PARENT;
		gpu = parent->gpu;
		m = sd_zalloc(sizeof(*m));
		if (!m)
			return SD_NV_ERR_NO_MEMORY;
		m->bytes = r->p.mem.size;
		if (r->cls == SD_NV01_MEMORY_SYSTEM) {
			m->sysmem = 1;
			m->page = SD_PAGE_4K;
		} else {
			m->held = (m->bytes + SD_PMA_GRANULE - 1) & ~(SD_PMA_GRANULE - 1);
			m->page = page_size(&r->p.mem, &field);
		}
		break;
	}
	if (m) {
		if (m->held > n->total[gpu] - n->used[gpu]) {
			sd_free(m);
			return SD_NV_ERR_NO_MEMORY;
		}
		m->refs = 1;
		m->gpu = gpu;
	}
	o = new_obj(c, parent, h, r->cls, gpu);
	if (!o) {
		sd_free(m);
		return SD_NV_ERR_NO_MEMORY;
	}
	if (r->cls == SD_NV01_DEVICE_0) {
		o->share = r->p.dev.hClientShare;
		o->vamode = r->p.dev.vaMode;
	}
	o->space = space;
	if (m) {
		o->mem = m;
		m->listed = o;
		n->used[gpu] += m->held;
	}
	r->hNew = h;
	return SD_NV_OK;
}

/* NV_ESC_RM_ALLOC on the kernel copy of an NVOS21 or NVOS64 block. */
static enum sd_rc rm_alloc(struct sd_file *f, const struct sd_env *env, void *arg, sd_u32 size)
{
	/* The two layouts share every field up to pAllocParms; status sits apart. */
	struct sd_nvos21 *p = arg;
	sd_u32 *status = size == sizeof(struct sd_nvos64) ?
		&((struct sd_nvos64 *)arg)->status : &p->status;
	struct sd_alloc_req r;
	sd_u32 psize, st, pid;

	if (size != sizeof(struct sd_nvos21) && size != sizeof(struct sd_nvos64))
		return SD_RC_INVAL;
	if (!is_ctl(f))
		return SD_RC_INVAL;
	__builtin_memset(&r, 0, sizeof(r));
	r.hRoot = p->hRoot;
	r.hParent = p->hObjectParent;
	r.hNew = p->hObjectNew;
	r.cls = p->hClass;
	switch (r.cls) {
	case SD_NV01_ROOT:
	case SD_NV01_ROOT_NON_PRIV:
	case SD_NV01_ROOT_CLIENT:
		/* User space always gets the _CLIENT class, written back as RM does. */
		p->hClass = SD_NV01_ROOT_CLIENT;
		pid = env->caller(env->ctx);
		env->lock(env->ctx);
		st = alloc_client(f, pid, &r.hNew);
		env->unlock(env->ctx);
		if (st == SD_NV_OK)
			p->hObjectNew = r.hNew;
		*status = st;
		return SD_OK;
	case SD_NV01_DEVICE_0:
		psize = sizeof(struct sd_nv0080_alloc);
		break;
	case SD_NV20_SUBDEVICE_0:
		psize = sizeof(struct sd_nv2080_alloc);
		break;
	case SD_NV01_MEMORY_LOCAL_USER:
	case SD_NV01_MEMORY_SYSTEM:
	case SD_NV50_MEMORY_VIRTUAL:
		psize = f->node->memparams_size;
		break;
	case SD_KEPLER_CHANNEL_GROUP_A:
		psize = sizeof(struct sd_channel_group_alloc);
		break;
	case SD_TURING_CHANNEL_GPFIFO_A:
		psize = sizeof(struct sd_channel_alloc_head);
		break;
	case SD_FERMI_VASPACE_A:
		psize = sizeof(struct sd_vaspace_alloc);
		break;
	default:
		*status = SD_NV_ERR_INVALID_CLASS;
		return SD_OK;
	}
	/* The class's own size, whatever paramsSize says; fetched once. */
	if (p->pAllocParms == 0) {
		*status = SD_NV_ERR_INVALID_ARGUMENT;
		return SD_OK;
	}
	if (env->copy_in(env->ctx, &r.p, p->pAllocParms, psize)) {
		*status = SD_NV_ERR_INVALID_ADDRESS;
		return SD_OK;
	}
	if (r.cls == SD_NV01_MEMORY_LOCAL_USER || r.cls == SD_NV01_MEMORY_SYSTEM ||
	    r.cls == SD_NV50_MEMORY_VIRTUAL) {
		st = r.cls == SD_NV50_MEMORY_VIRTUAL ? check_range(&r.p.mem) :
		     r.cls == SD_NV01_MEMORY_SYSTEM ? check_sysmem(&r.p.mem) : check_memory(&r.p.mem);
		if (st != SD_NV_OK) {
			*status = st;
			return SD_OK;
		}
		/*
		 * Handed back before the allocation so that no user copy happens under
		 * the lock; a later failure leaves the would-be size there.
		 */
		if (env->copy_out(env->ctx, p->pAllocParms, &r.p, psize)) {
			*status = SD_NV_ERR_INVALID_ADDRESS;
			return SD_OK;
		}
	}
	if (r.cls == SD_NV01_DEVICE_0 && r.p.dev.deviceId < f->node->ngpus)
		r.gpu_open = env->gpu_open(env->ctx, r.p.dev.deviceId);
	env->lock(env->ctx);
	st = alloc_object(f, &r);
	env->unlock(env->ctx);
	if (st == SD_NV_OK)
		p->hObjectNew = r.hNew;
	*status = st;
	return SD_OK;
}

/* Frees hObjectOld of c: c itself with all it holds, or an object with its subtree. Locked. */
static sd_u32 free_handle(struct sd_node *n, struct sd_client *c, sd_u32 hObjectOld)
{
	struct sd_obj *o;

	if (hObjectOld == c->handle) {
		free_client(n, c);
		return SD_NV_OK;
	}
	o = find_obj(c, hObjectOld);
	if (!o)
		return SD_NV_ERR_OBJECT_NOT_FOUND;
	free_subtree(n, c, o);
	return SD_NV_OK;
}

/* NV_ESC_RM_FREE, on the caller's own clients only. */
static enum sd_rc rm_free(struct sd_file *f, const struct sd_env *env, void *arg, sd_u32 size)
{
	struct sd_nvos00 *p = arg;
	struct sd_node *n = f->node;
	struct sd_client *c;

	if (!is_ctl(f))
		return SD_RC_INVAL;
	if (size != sizeof(*p))
		return SD_RC_INVAL;
	env->lock(env->ctx);
	c = find_client(n, p->hRoot);
	p->status = !c || c->file != rm_identity(f) ? SD_NV_ERR_INVALID_CLIENT :
		free_handle(n, c, p->hObjectOld);
	env->unlock(env->ctx);
	return SD_OK;
}

/*
 * NV_ESC_RM_DUP_OBJECT: a new handle in the caller's client on the memory another handle
 * names (serverCopyResource, clientCopyResource, memCopyConstruct), checked in RM's
 * order. Only memory, channel groups and VA spaces can be copied (resCanCopy: devices,
 * subdevices and channels cannot; kchangrpapiCanCopy, vaspaceapiCanCopy): a group's
 * duplicate keeps the group's memory after the group's own handle and its channels are
 * freed, a VA space's its page directory. Across
 * clients RM's default share policy, RS_SHARE_TYPE_PID, lets a process duplicate only
 * from its own clients; the policies a client can add with NV0000_CTRL_CMD_CLIENT_SHARE_OBJECT
 * are not served here. Under the node's lock.
 */
static sd_u32 dup_object(struct sd_file *f, struct sd_nvos55 *p)
{
	struct sd_node *n = f->node;
	struct sd_client *c = find_client(n, p->hClient);
	const struct sd_client *src = find_client(n, p->hClientSrc);
	struct sd_obj *so, *parent;
	sd_u32 h = p->hObject, st;

	if (!c || !src || c->file != rm_identity(f))
		return SD_NV_ERR_INVALID_CLIENT;
	so = find_obj(src, p->hObjectSrc);
	if (!so && p->hObjectSrc != src->handle)
		return SD_NV_ERR_OBJECT_NOT_FOUND;
	/* resCanCopy: memory, channel groups and VA spaces, not channels. */
	if (!so || !so->mem || so->cls == SD_TURING_CHANNEL_GPFIFO_A)
		return SD_NV_ERR_INVALID_ARGUMENT;
	/* A range only in its device's VA space, the one its copy takes (_virtmemCopyConstruct). */
	if (so->space)
		return SD_NV_ERR_INVALID_DEVICE;
	st = take_obj_handle(n, c, &h);
	if (st != SD_NV_OK)
		return st;
	parent = find_obj(c, p->hParent);
	if (!parent && p->hParent != c->handle)
		return SD_NV_ERR_OBJECT_NOT_FOUND;
	if (src != c && src->pid != c->pid)
		return SD_NV_ERR_INSUFFICIENT_PERMISSIONS;
	/* Under a device or subdevice only, the same kind as the source's (a group's: a device). */
	if (!parent || (parent->cls != SD_NV01_DEVICE_0 && parent->cls != SD_NV20_SUBDEVICE_0) ||
	    (parent->cls == SD_NV20_SUBDEVICE_0) != (so->parent->cls == SD_NV20_SUBDEVICE_0))
		return SD_NV_ERR_INVALID_OBJECT_PARENT;
	if (!name_mem(c, parent, h, so))
		return SD_NV_ERR_NO_MEMORY;
	p->hObject = h;
	return SD_NV_OK;
}

static enum sd_rc rm_dup(struct sd_file *f, const struct sd_env *env, void *arg, sd_u32 size)
{
	struct sd_nvos55 *p = arg;

	if (!is_ctl(f) || size != sizeof(*p))
		return SD_RC_INVAL;
	env->lock(env->ctx);
	p->status = dup_object(f, p);
	env->unlock(env->ctx);
	return SD_OK;
}

/*
 * RmDmabufVerifyMemHandle (osapi.c): what a dma-buf may take of hMemory of client src.
 * Like RM, the client is found by its handle alone, not checked to be the caller's.
 */
static sd_u32 dmabuf_verify(const struct sd_client *src, sd_u32 hMemory, sd_u32 gpu, sd_u64 offset,
			    sd_u64 size, const struct sd_obj **out)
{
	const struct sd_obj *o = find_obj(src, hMemory);

	if (!o)
		return hMemory == src->handle ? SD_NV_ERR_INVALID_OBJECT : SD_NV_ERR_OBJECT_NOT_FOUND;
	if (!is_vidmem(o))
		return SD_NV_ERR_INVALID_OBJECT;
	if (o->mem->gpu != gpu)
		return SD_NV_ERR_INVALID_OBJECT_PARENT;
	if ((offset | size) & (SD_PAGE_4K - 1))
		return SD_NV_ERR_INVALID_ARGUMENT;
	if (size == 0 || size > o->mem->bytes || offset > o->mem->bytes - size)
		return SD_NV_ERR_INVALID_ARGUMENT;
	*out = o;
	return SD_NV_OK;
}

/*
 * nv_dma_buf_export and nv_dma_buf_create's RM half (nv-dmabuf.c; osapi.c's
 * rm_dma_buf_dup_mem_handle), under the node's lock: each object duplicated into a
 * client of the driver's own (no process's, no file's: RM dups into its MemoryManager's
 * client), under a device on the GPU. That client holds the memory until the dma-buf
 * is released, whatever happens to the handles it came from. One client per dma-buf
 * here (RM has one per GPU), so that the release frees it whole.
 */
static sd_u32 dmabuf_dup(struct sd_node *n, sd_u32 gpu, const struct sd_export_dmabuf *p, sd_u32 *hold)
{
	const struct sd_client *src;
	const struct sd_obj *so;
	struct sd_client *c;
	struct sd_obj *dev;
	sd_u64 attached = 0;
	sd_u32 i, h, st;

	if (p->totalSize == 0 || p->numObjects == 0 || p->totalObjects == 0 ||
	    p->numObjects > SD_DMABUF_EXPORT_MAX_HANDLES || p->numObjects > p->totalObjects)
		return SD_NV_ERR_INVALID_ARGUMENT;
	if (p->fd >= 0)
		return SD_NV_ERR_NOT_SUPPORTED;	/* adding to a dma-buf: not served */
	if (p->fd != -1 || p->index > p->totalObjects - p->numObjects)
		return SD_NV_ERR_INVALID_ARGUMENT;
	st = new_client_handle(n, SD_CLIENT_INTERNAL_HANDLE_BASE, &n->internal_seq, &h);
	if (st != SD_NV_OK)
		return st;
	c = new_client(n, h, 0, 0);
	if (!c)
		return SD_NV_ERR_NO_MEMORY;
	st = new_obj_handle(n, c, &h);
	dev = st == SD_NV_OK ? new_obj(c, 0, h, SD_NV01_DEVICE_0, gpu) : 0;
	if (!dev && st == SD_NV_OK)
		st = SD_NV_ERR_NO_MEMORY;
	src = find_client(n, p->hClient);
	if (st == SD_NV_OK && !src)
		st = SD_NV_ERR_INVALID_CLIENT;
	for (i = 0; st == SD_NV_OK && i < p->numObjects; i++) {
		if (p->sizes[i] > p->totalSize - attached) {
			st = SD_NV_ERR_INVALID_ARGUMENT;
			break;
		}
		st = dmabuf_verify(src, p->handles[i], gpu, p->offsets[i], p->sizes[i], &so);
		if (st == SD_NV_OK)
			st = new_obj_handle(n, c, &h);
		if (st != SD_NV_OK)
			break;
		if (!name_mem(c, dev, h, so)) {
			st = SD_NV_ERR_NO_MEMORY;
			break;
		}
		attached += p->sizes[i];
	}
	if (st == SD_NV_OK && p->numObjects == p->totalObjects && attached != p->totalSize)
		st = SD_NV_ERR_INVALID_ARGUMENT;
	if (st != SD_NV_OK) {
		free_client(n, c);
		return st;
	}
	*hold = c->handle;
	return SD_NV_OK;
}

sd_u32 sd_dmabuf_dup(struct sd_node *n, sd_u32 gpu, const struct sd_env *env,
		     const struct sd_export_dmabuf *p, sd_u32 *hold)
{
	sd_u32 st;

	if (gpu >= n->ngpus)
		return SD_NV_ERR_INVALID_ARGUMENT;
	env->lock(env->ctx);
	st = dmabuf_dup(n, gpu, p, hold);
	env->unlock(env->ctx);
	return st;
}

void sd_dmabuf_release(struct sd_node *n, const struct sd_env *env, sd_u32 hold)
{
	struct sd_client *c;

	env->lock(env->ctx);
	c = find_client(n, hold);
	if (c && !c->file)
		free_client(n, c);
	env->unlock(env->ctx);
}

/*
 * The client nvidia-uvm duplicates into, with a device and a subdevice on gpu: as
 * NVIDIA's, one client of the driver's own for every GPU (uvm_global.c makes one RM
 * session, nvGpuOpsSessionCreate; uvm_gpu.c a device in it for each GPU,
 * nvGpuOpsDeviceCreate; nv_gpu_ops.c's dupMemory duplicates into the session's client
 * under that device or its subdevice), so a duplicate's handle is unique across GPUs
 * while it lives. Made at its first use and kept while the node lives. NULL: no memory.
 */
static struct sd_client *uvm_session(struct sd_node *n, sd_u32 gpu)
{
	struct sd_client *c = n->uvm_session ? find_client(n, n->uvm_session) : 0;
	struct sd_obj *dev;
	sd_u32 h;

	if (!c) {
		if (new_client_handle(n, SD_CLIENT_INTERNAL_HANDLE_BASE, &n->internal_seq, &h) != SD_NV_OK)
			return 0;
		c = new_client(n, h, 0, 0);
		if (!c)
			return 0;
		n->uvm_session = c->handle;
	}
	if (first_on_gpu(c, SD_NV20_SUBDEVICE_0, gpu))
		return c;
	dev = new_obj_handle(n, c, &h) == SD_NV_OK ? new_obj(c, 0, h, SD_NV01_DEVICE_0, gpu) : 0;
	if (!dev || new_obj_handle(n, c, &h) != SD_NV_OK || !new_obj(c, dev, h, SD_NV20_SUBDEVICE_0, gpu)) {
		if (dev)
			free_handle(n, c, dev->handle);
		return 0;
	}
	return c;
}

/*
 * nvGpuOpsDupMemory (nv_gpu_ops.c's dupMemory) under the node's lock: hMemory of client
 * hClient, any client on the node (found by its handle, as RM does), duplicated into
 * gpu's session under its device or subdevice as the source is under one, at the
 * caller's privilege (NV04_DUP_HANDLE_FLAGS_REJECT_KERNEL_DUP_PRIVILEGE: RM's default
 * share rule, the caller's own clients only).
 */
static sd_u32 uvm_dup(struct sd_node *n, sd_u32 caller, sd_u32 gpu, sd_u32 hClient, sd_u32 hMemory,
		      sd_u32 *hdup, struct sd_dup_info *info)
{
	const struct sd_client *src = find_client(n, hClient);
	const struct sd_obj *so;
	struct sd_client *c;
	struct sd_obj *parent;
	sd_u32 h;

	if (!src)
		return SD_NV_ERR_INVALID_CLIENT;
	so = find_obj(src, hMemory);
	if (!so && hMemory != src->handle)
		return SD_NV_ERR_OBJECT_NOT_FOUND;
	if (!so || !(is_vidmem(so) || is_sysmem(so)))
		return SD_NV_ERR_INVALID_OBJECT_HANDLE;
	c = uvm_session(n, gpu);
	if (!c)
		return SD_NV_ERR_NO_MEMORY;
	/* System memory under a device: deviceDescendant, the UUID its device's GPU's. */
	info->sysmem = is_sysmem(so);
	info->device_descendant = 1;
	info->page_size = so->mem->page;
	info->size = so->mem->bytes;
	info->gpu = so->mem->gpu;
	if (src->pid != caller)
		return SD_NV_ERR_INSUFFICIENT_PERMISSIONS;
	parent = first_on_gpu(c, so->parent->cls == SD_NV20_SUBDEVICE_0 ?
				SD_NV20_SUBDEVICE_0 : SD_NV01_DEVICE_0, gpu);
	if (new_obj_handle(n, c, &h) != SD_NV_OK)
		return SD_NV_ERR_INSUFFICIENT_RESOURCES;
	if (!name_mem(c, parent, h, so))
		return SD_NV_ERR_NO_MEMORY;
	*hdup = h;
	return SD_NV_OK;
}

sd_u32 sd_uvm_dup(struct sd_node *n, const struct sd_env *env, sd_u32 gpu, sd_u32 hClient,
		  sd_u32 hMemory, sd_u32 *hdup, struct sd_dup_info *info)
{
	sd_u32 st;

	if (gpu >= n->ngpus)
		return SD_NV_ERR_INVALID_ARGUMENT;
	env->lock(env->ctx);
	st = uvm_dup(n, env->caller(env->ctx), gpu, hClient, hMemory, hdup, info);
	env->unlock(env->ctx);
	return st;
}

/* GPU memory nvidia-uvm takes from RM's allocator for itself, into the figure fig. */
static sd_u32 uvm_pma(struct sd_node *n, const struct sd_env *env, sd_u32 gpu, sd_u64 bytes,
		      int take, sd_u64 *fig)
{
	sd_u32 st = SD_NV_OK;

	env->lock(env->ctx);
	if (!take) {
		n->used[gpu] -= bytes;
		fig[gpu] -= bytes;
	} else if (bytes > n->total[gpu] - n->used[gpu]) {
		st = SD_NV_ERR_NO_MEMORY;
	} else {
		n->used[gpu] += bytes;
		fig[gpu] += bytes;
	}
	env->unlock(env->ctx);
	return st;
}

sd_u32 sd_uvm_tables(struct sd_node *n, const struct sd_env *env, sd_u32 gpu, sd_u64 bytes, int take)
{
	if (gpu >= n->ngpus)
		return SD_NV_ERR_INVALID_ARGUMENT;
	return uvm_pma(n, env, gpu, bytes, take, n->uvm_tables);
}

sd_u32 sd_uvm_pages(struct sd_node *n, const struct sd_env *env, sd_u32 gpu, sd_u64 bytes, int take)
{
	if (gpu >= n->ngpus)
		return SD_NV_ERR_INVALID_ARGUMENT;
	return uvm_pma(n, env, gpu, bytes, take, n->uvm_pages);
}

sd_u32 sd_uvm_free_dup(struct sd_node *n, const struct sd_env *env, sd_u32 gpu, sd_u32 hdup)
{
	struct sd_client *c;
	sd_u32 st = SD_NV_ERR_INVALID_ARGUMENT;

	if (gpu >= n->ngpus)
		return st;
	env->lock(env->ctx);
	c = n->uvm_session ? find_client(n, n->uvm_session) : 0;
	if (c && hdup != c->handle)
		st = free_handle(n, c, hdup);
	env->unlock(env->ctx);
	return st;
}

/*
 * nvGpuOpsRetainChannel (nv_gpu_ops.c) under the node's lock: the channel is found by
 * its client's handle alone, any client on the node (nvGpuOpsVerifyChannel, which
 * also wants it on the va_space's GPU); its group is duplicated into the session at
 * the caller's privilege (NV04_DUP_HANDLE_FLAGS_REJECT_KERNEL_DUP_PRIVILEGE: the
 * caller's own clients only), and a UVM_CHANNEL_RETAINER made under that duplicate
 * (under the session's device for a channel in no group) keeps the channel's instance.
 * So both stay in the GPU after the process frees them, until the release.
 */
static sd_u32 uvm_retain(struct sd_node *n, sd_u32 caller, sd_u32 gpu, sd_u32 hClient,
			 sd_u32 hChannel, sd_u32 *hold)
{
	const struct sd_client *src = find_client(n, hClient);
	struct sd_obj *so, *parent, *grp = 0, *ret;
	struct sd_client *c;
	sd_u32 h;

	if (!src)
		return SD_NV_ERR_INVALID_CLIENT;
	so = find_obj(src, hChannel);
	if (!so || so->cls != SD_TURING_CHANNEL_GPFIFO_A)
		return SD_NV_ERR_INVALID_OBJECT_HANDLE;
	if (so->gpu != gpu)
		return SD_NV_ERR_OTHER_DEVICE_FOUND;
	c = uvm_session(n, gpu);
	if (!c)
		return SD_NV_ERR_NO_MEMORY;
	parent = first_on_gpu(c, SD_NV01_DEVICE_0, gpu);
	if (so->parent->cls == SD_KEPLER_CHANNEL_GROUP_A) {
		if (src->pid != caller)
			return SD_NV_ERR_INSUFFICIENT_PERMISSIONS;
		if (new_obj_handle(n, c, &h) != SD_NV_OK)
			return SD_NV_ERR_INSUFFICIENT_RESOURCES;
		grp = name_mem(c, parent, h, so->parent);
		if (!grp)
			return SD_NV_ERR_NO_MEMORY;
		parent = grp;
	}
	ret = new_obj_handle(n, c, &h) == SD_NV_OK ? name_mem(c, parent, h, so) : 0;
	if (!ret) {
		if (grp)
			free_handle(n, c, grp->handle);
		return SD_NV_ERR_NO_MEMORY;
	}
	/* What RM makes is a retainer naming the channel, not a second channel. */
	ret->cls = SD_UVM_CHANNEL_RETAINER;
	*hold = grp ? grp->handle : h;
	return SD_NV_OK;
}

/*
 * nvGpuOpsDupAddressSpace under the node's lock: the VA space is found by its client's
 * handle alone (NV_ERR_INVALID_OBJECT if it is no VA space); its parent must be a device
 * (RM asserts it; the stand-in answers NV_ERR_INVALID_OBJECT) on gpu; duplicated into the
 * session under its device at the caller's privilege (another process's client:
 * NV_ERR_INSUFFICIENT_PERMISSIONS). Not modelled: the check that the space is externally
 * owned (NV_VASPACE_ALLOCATION_FLAGS_IS_EXTERNALLY_OWNED, NV_ERR_INVALID_FLAGS).
 */
static sd_u32 uvm_dup_vaspace(struct sd_node *n, sd_u32 caller, sd_u32 gpu, sd_u32 hClient,
			      sd_u32 hVaSpace, sd_u32 *hold)
{
	const struct sd_client *src = find_client(n, hClient);
	struct sd_client *c;
	struct sd_obj *so;
	sd_u32 h;

	if (!src)
		return SD_NV_ERR_INVALID_CLIENT;
	so = find_obj(src, hVaSpace);
	if (!so)
		return SD_NV_ERR_OBJECT_NOT_FOUND;
	if (so->cls != SD_FERMI_VASPACE_A || so->parent->cls != SD_NV01_DEVICE_0)
		return SD_NV_ERR_INVALID_OBJECT;
	if (so->gpu != gpu)
		return SD_NV_ERR_OTHER_DEVICE_FOUND;
	c = uvm_session(n, gpu);
	if (!c)
		return SD_NV_ERR_NO_MEMORY;
	if (src->pid != caller)
		return SD_NV_ERR_INSUFFICIENT_PERMISSIONS;
	if (new_obj_handle(n, c, &h) != SD_NV_OK)
		return SD_NV_ERR_INSUFFICIENT_RESOURCES;
	if (!name_mem(c, first_on_gpu(c, SD_NV01_DEVICE_0, gpu), h, so))
		return SD_NV_ERR_NO_MEMORY;
	*hold = h;
	return SD_NV_OK;
}

/* What nvidia-uvm has the driver keep (uvm_retain, uvm_dup_vaspace), under the node's lock. */
static sd_u32 uvm_keep(sd_u32 (*keep)(struct sd_node *n, sd_u32 caller, sd_u32 gpu, sd_u32 hClient,
				      sd_u32 h, sd_u32 *hold),
		       struct sd_node *n, const struct sd_env *env, sd_u32 gpu, sd_u32 hClient, sd_u32 h,
		       sd_u32 *hold)
{
	sd_u32 st;

	if (gpu >= n->ngpus)
		return SD_NV_ERR_INVALID_ARGUMENT;
	env->lock(env->ctx);
	st = keep(n, env->caller(env->ctx), gpu, hClient, h, hold);
	env->unlock(env->ctx);
	return st;
}

sd_u32 sd_uvm_retain(struct sd_node *n, const struct sd_env *env, sd_u32 gpu, sd_u32 hClient,
		     sd_u32 hChannel, sd_u32 *hold)
{
	return uvm_keep(uvm_retain, n, env, gpu, hClient, hChannel, hold);
}

sd_u32 sd_uvm_dup_vaspace(struct sd_node *n, const struct sd_env *env, sd_u32 gpu, sd_u32 hClient,
			  sd_u32 hVaSpace, sd_u32 *hold)
{
	return uvm_keep(uvm_dup_vaspace, n, env, gpu, hClient, hVaSpace, hold);
}

/*
 * _nvGpuOpsReleaseChannel (the retainer, and the group's duplicate with it) and
 * nvGpuOpsAddressSpaceDestroy (the VA space's duplicate).
 */
void sd_uvm_release(struct sd_node *n, const struct sd_env *env, sd_u32 hold)
{
	struct sd_client *c;

	env->lock(env->ctx);
	c = n->uvm_session ? find_client(n, n->uvm_session) : 0;
	if (c && hold != c->handle)
		(void)free_handle(n, c, hold);
	env->unlock(env->ctx);
}

void sd_uvm_sessions_free(struct sd_node *n)
{
	struct sd_client *c = n->uvm_session ? find_client(n, n->uvm_session) : 0;

	if (c)
		free_client(n, c);
	n->uvm_session = 0;
}

/* NV_ESC_EXPORT_TO_DMABUF_FD, which nvidia_ioctl serves itself, on a GPU's node only. */
static enum sd_rc export_dmabuf(struct sd_file *f, const struct sd_env *env, void *arg, sd_u32 size)
{
	struct sd_export_dmabuf *p = arg;

	if (size != sizeof(*p) || is_ctl(f))
		return SD_RC_INVAL;
	p->status = env->dmabuf_export(env->ctx, f, p);
	return SD_OK;
}

/* rm_perform_version_check: strict, relaxed (up to the first '.') or a query. */
static enum sd_rc check_version(struct sd_file *f, void *arg, sd_u32 size)
{
	struct sd_rm_api_version *p = arg;
	const char *ours = f->node->version;
	int relaxed;
	sd_u32 i;

	if (!is_ctl(f) || size != sizeof(*p))
		return SD_RC_INVAL;
	p->reply = SD_VERSION_REPLY_RECOGNIZED;
	if (p->cmd != SD_VERSION_CMD_QUERY) {
		relaxed = p->cmd == SD_VERSION_CMD_RELAXED;
		for (i = 0; i < SD_VERSION_STRING_LENGTH; i++) {
			if (p->versionString[i] != ours[i])
				break;
			if ((relaxed && ours[i] == '.') || ours[i] == '\0')
				return SD_OK;
		}
	}
	__builtin_memset(p->versionString, 0, sizeof(p->versionString));
	for (i = 0; ours[i]; i++)
		p->versionString[i] = ours[i];
	return p->cmd == SD_VERSION_CMD_QUERY ? SD_OK : SD_RC_INVAL;
}

/* nvidia_read_card_info: one entry per GPU; too small an array is -EINVAL. */
static enum sd_rc card_info(struct sd_file *f, void *arg, sd_u32 size)
{
	struct sd_card_info *ci = arg;
	sd_u32 n = size / sizeof(*ci), i;

	if (!is_ctl(f))
		return SD_RC_INVAL;
	__builtin_memset(ci, 0, (unsigned long)n * sizeof(*ci));
	if (n < f->node->ngpus)
		return SD_RC_INVAL;
	for (i = 0; i < f->node->ngpus; i++) {
		ci[i].valid = 1;
		ci[i].bus = (sd_u8)(0x10 + i);
		ci[i].vendor_id = PCI_VENDOR_NVIDIA;
		ci[i].device_id = PCI_DEVICE_T4;
		ci[i].gpu_id = sd_gpu_id(i);
		ci[i].fb_size = f->node->total[i];
		ci[i].minor_number = i;
	}
	return SD_OK;
}

static int is_gpu_id(const struct sd_node *n, sd_u32 id)
{
	sd_u32 i;

	for (i = 0; i < n->ngpus; i++)
		if (sd_gpu_id(i) == id)
			return 1;
	return 0;
}

/* NV_ESC_ATTACH_GPUS_TO_FD: once per file, every non-zero id a GPU of the node. */
static enum sd_rc attach_gpus(struct sd_file *f, const struct sd_env *env, void *arg, sd_u32 size)
{
	const sd_u32 *ids = arg;
	sd_u32 n = size / sizeof(sd_u32), i;
	sd_u32 *copy;
	enum sd_rc rc = SD_OK;

	if (!is_ctl(f) || n == 0 || size % sizeof(sd_u32))
		return SD_RC_INVAL;
	for (i = 0; i < n; i++)
		if (ids[i] != 0 && !is_gpu_id(f->node, ids[i]))
			return SD_RC_INVAL;
	copy = sd_zalloc(size);
	if (!copy)
		return SD_RC_NOMEM;
	__builtin_memcpy(copy, ids, size);
	env->lock(env->ctx);
	if (f->nattached) {
		rc = SD_RC_INVAL;
	} else {
		f->attached = copy;
		f->nattached = n;
		copy = 0;
	}
	env->unlock(env->ctx);
	sd_free(copy);
	return rc;
}

/*
 * NV_ESC_REGISTER_FD (escape.c): from now on RM takes calls on f as calls on control
 * file ctl_fd (its clients are that file's, and go with that file's release, which the
 * reference taken here holds off). On any node; the target must be a control file,
 * not f, not itself registered; f registers once. Any failure is the escape's error.
 */
static enum sd_rc rm_register_fd(struct sd_file *f, const struct sd_env *env, void *arg, sd_u32 size)
{
	const struct sd_register_fd *p = arg;
	struct sd_file *t;
	void *ref = 0;
	int ok;

	if (size != sizeof(*p))
		return SD_RC_INVAL;
	t = env->ctl_get(env->ctx, p->ctl_fd, &ref);
	if (!t)
		return SD_RC_INVAL;
	env->lock(env->ctx);
	ok = !f->ctl && t != f && !t->ctl;
	if (ok) {
		f->ctl = t;
		f->ctl_ref = ref;
	}
	env->unlock(env->ctx);
	if (ok)
		return SD_OK;
	env->ctl_put(env->ctx, ref);
	return SD_RC_INVAL;
}

enum sd_rc sd_rm_ioctl(struct sd_file *f, const struct sd_env *env, sd_u32 nr, void *arg, sd_u32 size)
{
	switch (nr) {
	case SD_ESC_RM_ALLOC:
		return rm_alloc(f, env, arg, size);
	case SD_ESC_RM_FREE:
		return rm_free(f, env, arg, size);
	case SD_ESC_RM_DUP_OBJECT:
		return rm_dup(f, env, arg, size);
	case SD_ESC_REGISTER_FD:
		return rm_register_fd(f, env, arg, size);
	default:
		/* What RmIoctl answers an escape it does not know. */
		return SD_RC_INVAL;
	}
}

/* The escapes nvidia_ioctl answers itself; every other goes to RM (rm_ioctl). */
static enum sd_rc dispatch(struct sd_file *f, const struct sd_env *env, sd_u32 nr, void *arg, sd_u32 size)
{
	switch (nr) {
	case SD_ESC_CHECK_VERSION_STR:
		return check_version(f, arg, size);
	case SD_ESC_CARD_INFO:
		return card_info(f, arg, size);
	case SD_ESC_ATTACH_GPUS_TO_FD:
		return attach_gpus(f, env, arg, size);
	case SD_ESC_EXPORT_TO_DMABUF_FD:
		return export_dmabuf(f, env, arg, size);
	default:
		return env->rm_ioctl(env->ctx, f, nr, arg, size);
	}
}

enum sd_rc sd_entry(struct sd_file *f, const struct sd_env *env, sd_u32 nr, sd_u32 size, sd_u64 uarg)
{
	struct sd_xfer x;
	enum sd_rc rc;
	void *arg;

	if (nr == SD_ESC_IOCTL_XFER_CMD) {
		if (size != sizeof(x))
			return SD_RC_INVAL;
		if (env->copy_in(env->ctx, &x, uarg, sizeof(x)))
			return SD_RC_FAULT;
		/* An XFER inside an XFER is an unknown escape: no recursion. */
		nr = x.cmd;
		size = x.size;
		uarg = x.ptr;
		if (size > SD_MAX_IOCTL_SIZE)
			return SD_RC_INVAL;
	}
	/* One byte more than asked: a size of 0 still gets a buffer. */
	arg = sd_zalloc((unsigned long)size + 1);
	if (!arg)
		return SD_RC_NOMEM;
	if (env->copy_in(env->ctx, arg, uarg, size)) {
		sd_free(arg);
		return SD_RC_FAULT;
	}
	rc = dispatch(f, env, nr, arg, size);
	/* Copied back whatever the outcome, as nvidia_ioctl does. */
	if (env->copy_out(env->ctx, uarg, arg, size))
		rc = SD_RC_FAULT;
	sd_free(arg);
	return rc;
}

/*
 * A control's parameters in kernel memory, of the command's own size: NULL if they are
 * not (RM's NV_ERR_INVALID_PARAM_STRUCT).
 */
static void *ctl_params(const struct sd_nvos54 *ctl, sd_u32 size)
{
	return ctl->params && ctl->paramsSize == size ? (void *)(unsigned long)ctl->params : 0;
}

/* NV0041_CTRL_CMD_GET_SURFACE_INFO (memCtrlCmdGetSurfaceInfoLvm): stops at the first bad index. */
static sd_u32 surface_info(const struct sd_obj *o, struct sd_nvos54 *c)
{
	struct sd_nv0041_get_surface_info *p = ctl_params(c, sizeof(*p));
	struct sd_nv0041_surface_info *list;
	sd_u32 i;

	if (o->cls != SD_NV01_MEMORY_LOCAL_USER && o->cls != SD_NV50_MEMORY_VIRTUAL)
		return SD_NV_ERR_NOT_SUPPORTED;
	if (!p)
		return SD_NV_ERR_INVALID_PARAM_STRUCT;
	list = (void *)(unsigned long)p->surfaceInfoList;
	if (!p->surfaceInfoListSize || !list)
		return SD_NV_OK;
	for (i = 0; i < p->surfaceInfoListSize; i++) {
		switch (list[i].index) {
		case SD_NV0041_SURFACE_INFO_INDEX_PHYS_SIZE:
			/* 32 bits of 4 KiB pages: a range of 16 TiB or more has no figure. */
			if (o->mem->bytes / SD_NV0041_SURFACE_INFO_PHYS_SIZE_SCALE > 0xffffffffULL)
				return SD_NV_ERR_OUT_OF_RANGE;
			list[i].data = (sd_u32)(o->mem->bytes / SD_NV0041_SURFACE_INFO_PHYS_SIZE_SCALE);
			break;
		case SD_NV0041_SURFACE_INFO_INDEX_ADDR_SPACE_TYPE:
			/* A range's descriptor is ADDR_VIRTUAL: RM's _INVALID. */
			list[i].data = o->cls == SD_NV50_MEMORY_VIRTUAL ? SD_ADDR_SPACE_TYPE_INVALID :
				       SD_ADDR_SPACE_TYPE_VIDMEM;
			break;
		default:
			return SD_NV_ERR_INVALID_ARGUMENT;
		}
	}
	return SD_NV_OK;
}

/*
 * NV0000_CTRL_CMD_CLIENT_GET_HANDLE_INFO (cliresCtrlCmdClientGetHandleInfo): an object's
 * class or parent (0 for a child of the client itself).
 */
static sd_u32 handle_info(const struct sd_client *c, struct sd_nvos54 *ctl)
{
	struct sd_nv0000_get_handle_info *p = ctl_params(ctl, sizeof(*p));
	const struct sd_obj *o;

	if (!p)
		return SD_NV_ERR_INVALID_PARAM_STRUCT;
	o = find_obj(c, p->hObject);
	if (!o)
		return SD_NV_ERR_OBJECT_NOT_FOUND;
	if (p->index == SD_GET_HANDLE_INFO_INDEX_CLASSID)
		p->data = o->cls;
	else if (p->index == SD_GET_HANDLE_INFO_INDEX_PARENT)
		p->data = o->parent ? o->parent->handle : c->handle;
	else
		return SD_NV_ERR_INVALID_ARGUMENT;
	return SD_NV_OK;
}

/* NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2: the GPU of an id; another id is NV_ERR_INVALID_ARGUMENT. */
static sd_u32 id_info(const struct sd_node *n, struct sd_nvos54 *ctl)
{
	struct sd_nv0000_get_id_info_v2 *p = ctl_params(ctl, sizeof(*p));
	sd_u32 gpu;

	if (!p)
		return SD_NV_ERR_INVALID_PARAM_STRUCT;
	for (gpu = 0; gpu < n->ngpus && sd_gpu_id(gpu) != p->gpuId; gpu++)
		;
	if (gpu == n->ngpus)
		return SD_NV_ERR_INVALID_ARGUMENT;
	p->gpuFlags = 0;
	p->deviceInstance = gpu;
	p->subDeviceInstance = 0;
	p->sliStatus = 0;
	p->boardId = 0;
	p->gpuInstance = gpu;
	p->numaId = -1;		/* NV0000_CTRL_NO_NUMA_NODE */
	return SD_NV_OK;
}

/* NV0080_CTRL_CMD_GPU_FIND_SUBDEVICE_HANDLE (subdeviceGetByInstance): the device's subdevice. */
static sd_u32 find_subdevice(const struct sd_client *c, const struct sd_obj *dev,
			     struct sd_nvos54 *ctl)
{
	struct sd_nv0080_find_subdevice *p = ctl_params(ctl, sizeof(*p));
	const struct sd_obj *o;

	if (!p)
		return SD_NV_ERR_INVALID_PARAM_STRUCT;
	for (o = c->objs; o; o = o->next)
		if (o->cls == SD_NV20_SUBDEVICE_0 && o->parent == dev && p->subDeviceInst == 0) {
			p->hSubDevice = o->handle;
			return SD_NV_OK;
		}
	return SD_NV_ERR_OBJECT_NOT_FOUND;
}

/* NV2080_CTRL_CMD_GPU_GET_ID: the subdevice's GPU's id. */
static sd_u32 gpu_id(const struct sd_obj *sub, struct sd_nvos54 *ctl)
{
	struct sd_nv2080_get_id *p = ctl_params(ctl, sizeof(*p));

	if (!p)
		return SD_NV_ERR_INVALID_PARAM_STRUCT;
	p->gpuId = sd_gpu_id(sub->gpu);
	return SD_NV_OK;
}

/*
 * The controls the kernel client may issue here: on a client, GET_HANDLE_INFO and
 * GET_ID_INFO_V2; on an object, the one its class has among GET_SURFACE_INFO (memory),
 * FIND_SUBDEVICE_HANDLE (a device) and GET_ID (a subdevice). Any other: RM's answer for a
 * command the object's class does not export, NV_ERR_NOT_SUPPORTED.
 */
static sd_u32 kernel_control(const struct sd_node *n, const struct sd_client *c, struct sd_nvos54 *ctl)
{
	const struct sd_obj *o;

	if (ctl->hObject == c->handle) {
		if (ctl->cmd == SD_NV0000_CTRL_CMD_CLIENT_GET_HANDLE_INFO)
			return handle_info(c, ctl);
		if (ctl->cmd == SD_NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2)
			return id_info(n, ctl);
		return SD_NV_ERR_NOT_SUPPORTED;
	}
	o = find_obj(c, ctl->hObject);
	if (!o)
		return SD_NV_ERR_OBJECT_NOT_FOUND;
	if (ctl->cmd == SD_NV0041_CTRL_CMD_GET_SURFACE_INFO)
		return surface_info(o, ctl);
	if (ctl->cmd == SD_NV0080_CTRL_CMD_GPU_FIND_SUBDEVICE_HANDLE && o->cls == SD_NV01_DEVICE_0)
		return find_subdevice(c, o, ctl);
	if (ctl->cmd == SD_NV2080_CTRL_CMD_GPU_GET_ID && o->cls == SD_NV20_SUBDEVICE_0)
		return gpu_id(o, ctl);
	return SD_NV_ERR_NOT_SUPPORTED;
}

void sd_kernel_op(struct sd_node *n, const struct sd_env *env, struct sd_rmapi_ops *ops)
{
	struct sd_client *c;

	env->lock(env->ctx);
	switch (ops->op) {
	case SD_NV01_FREE:
		c = find_client(n, ops->params.free.hRoot);
		ops->params.free.status = c ? free_handle(n, c, ops->params.free.hObjectOld) :
			SD_NV_ERR_INVALID_CLIENT;
		break;
	case SD_NV04_CONTROL:
		c = find_client(n, ops->params.control.hClient);
		ops->params.control.status = c ? kernel_control(n, c, &ops->params.control) :
			SD_NV_ERR_INVALID_CLIENT;
		break;
	}
	env->unlock(env->ctx);
}
