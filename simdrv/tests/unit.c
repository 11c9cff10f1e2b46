// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Unit tests of the stand-in driver's pure logic (lib/rm.c), one function per rule. */
#include "harness.h"

#define PARAMS	(UBASE + 4096)	/* where the class parameters live */
#define MiB	(1ULL << 20)

static struct sd_node node;

/* One ioctl with the parameter block at UBASE; the block is read back into p. */
static enum sd_rc ioc(struct sd_file *f, sd_u32 nr, sd_u32 size, void *p)
{
	enum sd_rc rc;

	memcpy(umem, p, size);
	rc = sd_entry(f, &henv, nr, size, UBASE);
	memcpy(p, umem, size);
	check_ledger(&node);
	return rc;
}

/* The same call wrapped in NV_ESC_IOCTL_XFER_CMD, the block at UBASE + 8192. */
static enum sd_rc xfer(struct sd_file *f, sd_u32 nr, sd_u32 size, void *p)
{
	struct sd_xfer x = { .cmd = nr, .size = size, .ptr = UBASE + 8192 };
	enum sd_rc rc;

	memcpy(umem, &x, sizeof(x));
	memcpy(umem + 8192, p, size);
	rc = sd_entry(f, &henv, SD_ESC_IOCTL_XFER_CMD, sizeof(x), UBASE);
	memcpy(p, umem + 8192, size);
	check_ledger(&node);
	return rc;
}

/* RM_ALLOC as NVOS21 (wide = 0) or NVOS64 (wide = 1); returns the status. */
static sd_u32 alloc(struct sd_file *f, int wide, sd_u32 root, sd_u32 parent, sd_u32 *h,
		    sd_u32 cls, const void *cp, sd_u32 cpsize)
{
	if (cp)
		memcpy(umem + 4096, cp, cpsize);
	if (wide) {
		struct sd_nvos64 p = { .hRoot = root, .hObjectParent = parent, .hObjectNew = *h,
			.hClass = cls, .pAllocParms = cp ? PARAMS : 0, .paramsSize = cpsize };
		REQUIRE(ioc(f, SD_ESC_RM_ALLOC, sizeof(p), &p) == SD_OK);
		*h = p.hObjectNew;
		return p.status;
	} else {
		struct sd_nvos21 p = { .hRoot = root, .hObjectParent = parent, .hObjectNew = *h,
			.hClass = cls, .pAllocParms = cp ? PARAMS : 0, .paramsSize = cpsize };
		REQUIRE(ioc(f, SD_ESC_RM_ALLOC, sizeof(p), &p) == SD_OK);
		*h = p.hObjectNew;
		return p.status;
	}
}

static sd_u32 rmfree(struct sd_file *f, sd_u32 root, sd_u32 obj)
{
	struct sd_nvos00 p = { .hRoot = root, .hObjectOld = obj };

	REQUIRE(ioc(f, SD_ESC_RM_FREE, sizeof(p), &p) == SD_OK);
	return p.status;
}

static struct sd_memory_alloc vidmem(sd_u64 size)
{
	struct sd_memory_alloc m = { .owner = 0xcafe, .size = size };

	return m;
}

/* A client with a device (and subdevice) on gpu: handles 0x1000.. chosen by the caller. */
static sd_u32 setup(struct sd_file *f, sd_u32 client, sd_u32 gpu)
{
	struct sd_nv0080_alloc d = { .deviceId = gpu };
	struct sd_nv2080_alloc s = { 0 };
	sd_u32 h = client;

	REQUIRE(alloc(f, 0, 0, 0, &h, SD_NV01_ROOT_CLIENT, NULL, 0) == SD_NV_OK && h == client);
	h = 0x1000;
	REQUIRE(alloc(f, 0, client, client, &h, SD_NV01_DEVICE_0, &d, sizeof(d)) == SD_NV_OK);
	h = 0x1001;
	REQUIRE(alloc(f, 1, client, 0x1000, &h, SD_NV20_SUBDEVICE_0, &s, sizeof(s)) == SD_NV_OK);
	return client;
}

static void test_version(void)
{
	struct sd_file ctl, gpu;
	struct sd_rm_api_version v = { .cmd = SD_VERSION_CMD_QUERY };

	sd_file_init(&ctl, &node, SD_CTL_MINOR);
	sd_file_init(&gpu, &node, 0);
	REQUIRE(ioc(&ctl, SD_ESC_CHECK_VERSION_STR, sizeof(v), &v) == SD_OK);
	REQUIRE(v.reply == SD_VERSION_REPLY_RECOGNIZED && !strcmp(v.versionString, "535.261.03"));
	memset(&v, 0, sizeof(v));
	strcpy(v.versionString, "535.261.03");
	REQUIRE(ioc(&ctl, SD_ESC_CHECK_VERSION_STR, sizeof(v), &v) == SD_OK);
	strcpy(v.versionString, "535.104.05");
	REQUIRE(ioc(&ctl, SD_ESC_CHECK_VERSION_STR, sizeof(v), &v) == SD_RC_INVAL);
	REQUIRE(!strcmp(v.versionString, "535.261.03"));
	v.cmd = SD_VERSION_CMD_RELAXED;
	strcpy(v.versionString, "535.104.05");
	REQUIRE(ioc(&ctl, SD_ESC_CHECK_VERSION_STR, sizeof(v), &v) == SD_OK);
	strcpy(v.versionString, "550.1");
	REQUIRE(ioc(&ctl, SD_ESC_CHECK_VERSION_STR, sizeof(v), &v) == SD_RC_INVAL);
	/* Only on the control node, only its own size. */
	REQUIRE(ioc(&gpu, SD_ESC_CHECK_VERSION_STR, sizeof(v), &v) == SD_RC_INVAL);
	REQUIRE(ioc(&ctl, SD_ESC_CHECK_VERSION_STR, sizeof(v) - 1, &v) == SD_RC_INVAL);
	v.cmd = SD_VERSION_CMD_QUERY;
	REQUIRE(xfer(&ctl, SD_ESC_CHECK_VERSION_STR, sizeof(v), &v) == SD_OK);
}

static void test_card_info_attach(void)
{
	struct sd_file ctl, gpu;
	struct sd_card_info ci[SD_MAX_GPUS];
	sd_u32 ids[3] = { sd_gpu_id(1), 0, sd_gpu_id(3) };

	sd_file_init(&ctl, &node, SD_CTL_MINOR);
	sd_file_init(&gpu, &node, 0);
	memset(ci, 0xff, sizeof(ci));
	REQUIRE(ioc(&ctl, SD_ESC_CARD_INFO, sizeof(ci[0]) * 4, ci) == SD_OK);
	REQUIRE(ci[3].valid && ci[3].bus == 0x13 && ci[3].vendor_id == 0x10de && ci[3].minor_number == 3);
	REQUIRE(ci[0].gpu_id == sd_gpu_id(0) && ci[0].fb_size == 15109 * MiB);
	REQUIRE(ioc(&ctl, SD_ESC_CARD_INFO, sizeof(ci[0]) * 3, ci) == SD_RC_INVAL);
	REQUIRE(ioc(&gpu, SD_ESC_CARD_INFO, sizeof(ci[0]) * 4, ci) == SD_RC_INVAL);
	REQUIRE(xfer(&ctl, SD_ESC_CARD_INFO, sizeof(ci), ci) == SD_OK && ci[1].valid && !ci[4].valid);

	REQUIRE(ioc(&ctl, SD_ESC_ATTACH_GPUS_TO_FD, 0, ids) == SD_RC_INVAL);
	REQUIRE(ioc(&ctl, SD_ESC_ATTACH_GPUS_TO_FD, 5, ids) == SD_RC_INVAL);
	ids[1] = 0x9900;
	REQUIRE(ioc(&ctl, SD_ESC_ATTACH_GPUS_TO_FD, sizeof(ids), ids) == SD_RC_INVAL);
	ids[1] = 0;
	REQUIRE(ioc(&gpu, SD_ESC_ATTACH_GPUS_TO_FD, sizeof(ids), ids) == SD_RC_INVAL);
	REQUIRE(ioc(&ctl, SD_ESC_ATTACH_GPUS_TO_FD, sizeof(ids), ids) == SD_OK && ctl.nattached == 3);
	/* Once per file. */
	REQUIRE(ioc(&ctl, SD_ESC_ATTACH_GPUS_TO_FD, sizeof(ids), ids) == SD_RC_INVAL);
	sd_file_release(&ctl);
}

static void test_alloc_tree(void)
{
	struct sd_file ctl, ctl2;
	struct sd_memory_alloc m = vidmem(3 * MiB), out;
	struct sd_nv0080_alloc d = { .deviceId = 1 };
	sd_u32 h;

	sd_file_init(&ctl, &node, SD_CTL_MINOR);
	sd_file_init(&ctl2, &node, SD_CTL_MINOR);
	gpu_open_mask = 1u << 1;
	/* Handle 0: RM picks one; the class is written back as _CLIENT. */
	h = 0;
	REQUIRE(alloc(&ctl, 0, 0, 0, &h, SD_NV01_ROOT, NULL, 0) == SD_NV_OK);
	REQUIRE(h >= SD_CLIENT_HANDLE_BASE && h < SD_CLIENT_HANDLE_BASE + SD_CLIENT_HANDLE_RANGE);
	REQUIRE(rmfree(&ctl, h, h) == SD_NV_OK);
	h = 0xc1e00001;
	REQUIRE(alloc(&ctl, 1, 0, 0, &h, SD_NV01_ROOT_CLIENT, NULL, 0) == SD_NV_OK && h == 0xc1e00001);
	/* Client handles are one namespace for the node. */
	REQUIRE(alloc(&ctl2, 0, 0, 0, &h, SD_NV01_ROOT_CLIENT, NULL, 0) == SD_NV_ERR_INSERT_DUPLICATE_NAME);

	h = 0;	/* a generated device handle */
	REQUIRE(alloc(&ctl, 0, 0xc1e00001, 0xc1e00001, &h, SD_NV01_DEVICE_0, &d, sizeof(d)) == SD_NV_OK);
	REQUIRE(h >= SD_OBJ_HANDLE_BASE && h < SD_OBJ_HANDLE_BASE + SD_OBJ_HANDLE_RANGE);
	REQUIRE(rmfree(&ctl, 0xc1e00001, h) == SD_NV_OK);
	h = 0x1000;
	REQUIRE(alloc(&ctl, 0, 0xc1e00001, 0xc1e00001, &h, SD_NV01_DEVICE_0, &d, sizeof(d)) == SD_NV_OK);
	h = 0x2000;
	REQUIRE(alloc(&ctl, 0, 0xc1e00001, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m, sizeof(m)) == SD_NV_OK);
	/* 3 MiB in 2 MiB pages; size, limit and page size handed back. */
	memcpy(&out, umem + 4096, sizeof(out));
	REQUIRE(out.size == 4 * MiB && out.limit == 4 * MiB - 1);
	REQUIRE(((out.attr >> SD_ATTR_PAGE_SIZE_SHIFT) & 3) == SD_ATTR_PAGE_SIZE_HUGE);
	REQUIRE(node.used[1] == 4 * MiB);
	/* Duplicate handle, the client's own handle, unknown parent. */
	REQUIRE(alloc(&ctl, 1, 0xc1e00001, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m, sizeof(m)) == SD_NV_ERR_INSERT_DUPLICATE_NAME);
	h = 0xc1e00001;
	REQUIRE(alloc(&ctl, 1, 0xc1e00001, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m, sizeof(m)) == SD_NV_ERR_INVALID_OBJECT_HANDLE);
	h = 0x2001;
	REQUIRE(alloc(&ctl, 1, 0xc1e00001, 0x7777, &h, SD_NV01_MEMORY_LOCAL_USER, &m, sizeof(m)) == SD_NV_ERR_INVALID_OBJECT_PARENT);
	/* Memory under the client itself is refused: its parent is a device. */
	REQUIRE(alloc(&ctl, 1, 0xc1e00001, 0xc1e00001, &h, SD_NV01_MEMORY_LOCAL_USER, &m, sizeof(m)) == SD_NV_ERR_INVALID_OBJECT_PARENT);
	/* Another file cannot use the client, nor free in it. */
	REQUIRE(alloc(&ctl2, 1, 0xc1e00001, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m, sizeof(m)) == SD_NV_ERR_INVALID_CLIENT);
	REQUIRE(rmfree(&ctl2, 0xc1e00001, 0x2000) == SD_NV_ERR_INVALID_CLIENT);
	/* Freeing the device frees its memory; a second free finds nothing. */
	REQUIRE(rmfree(&ctl, 0xc1e00001, 0x1000) == SD_NV_OK && node.used[1] == 0);
	REQUIRE(rmfree(&ctl, 0xc1e00001, 0x2000) == SD_NV_ERR_OBJECT_NOT_FOUND);
	REQUIRE(rmfree(&ctl, 0xc1e00001, 0x1000) == SD_NV_ERR_OBJECT_NOT_FOUND);
	REQUIRE(rmfree(&ctl, 0xc1e00001, 0xc1e00001) == SD_NV_OK);
	REQUIRE(rmfree(&ctl, 0xc1e00001, 0xc1e00001) == SD_NV_ERR_INVALID_CLIENT);
	REQUIRE(node.clients == NULL);
}

/* The kernel client's class query (GET_HANDLE_INFO on the client): status, *cls. */
static sd_u32 kop_class(sd_u32 client, sd_u32 obj, sd_u32 index, sd_u64 *cls)
{
	struct sd_nv0000_get_handle_info hi = { .hObject = obj, .index = index };
	struct sd_rmapi_ops ops = { .op = SD_NV04_CONTROL };

	ops.params.control = (struct sd_nvos54){ .hClient = client, .hObject = client,
		.cmd = SD_NV0000_CTRL_CMD_CLIENT_GET_HANDLE_INFO,
		.params = (sd_u64)(unsigned long)&hi, .paramsSize = sizeof(hi) };
	sd_kernel_op(&node, &henv, &ops);
	*cls = hi.data;
	return ops.params.control.status;
}

/* One control of the kernel client, its parameters p of size: the status. */
static sd_u32 kop(sd_u32 client, sd_u32 obj, sd_u32 cmd, void *p, sd_u32 size)
{
	struct sd_rmapi_ops ops = { .op = SD_NV04_CONTROL };

	ops.params.control = (struct sd_nvos54){ .hClient = client, .hObject = obj, .cmd = cmd,
		.params = (sd_u64)(unsigned long)p, .paramsSize = size };
	sd_kernel_op(&node, &henv, &ops);
	return ops.params.control.status;
}

/*
 * Which GPU a device is on, asked by handle as cgpu_km asks it: its subdevice, the
 * subdevice's GPU id, that id's device instance; each control on its class only.
 */
static void test_gpu_of(void)
{
	struct sd_nv0080_find_subdevice fs = { .subDeviceInst = 0 };
	struct sd_nv2080_get_id id = { 0 };
	struct sd_nv0000_get_id_info_v2 ii = { 0 };
	struct sd_nv0080_alloc d = { .deviceId = 3 };
	struct sd_file ctl;
	sd_u32 c, h;

	sd_file_init(&ctl, &node, SD_CTL_MINOR);
	gpu_open_mask = 1u << 3;
	c = setup(&ctl, 0xc1e00020, 3);
	REQUIRE(kop(c, 0x1000, SD_NV0080_CTRL_CMD_GPU_FIND_SUBDEVICE_HANDLE, &fs, sizeof(fs)) == SD_NV_OK &&
		fs.hSubDevice == 0x1001);
	REQUIRE(kop(c, 0x1001, SD_NV2080_CTRL_CMD_GPU_GET_ID, &id, sizeof(id)) == SD_NV_OK &&
		id.gpuId == sd_gpu_id(3));
	ii.gpuId = id.gpuId;
	REQUIRE(kop(c, c, SD_NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2, &ii, sizeof(ii)) == SD_NV_OK &&
		ii.deviceInstance == 3 && ii.subDeviceInstance == 0 && ii.numaId == -1);
	/* Another subdevice instance, a device without one, an unknown id. */
	fs.subDeviceInst = 1;
	REQUIRE(kop(c, 0x1000, SD_NV0080_CTRL_CMD_GPU_FIND_SUBDEVICE_HANDLE, &fs, sizeof(fs)) == SD_NV_ERR_OBJECT_NOT_FOUND);
	h = 0xc1e00021;
	REQUIRE(alloc(&ctl, 0, 0, 0, &h, SD_NV01_ROOT_CLIENT, NULL, 0) == SD_NV_OK);
	h = 0x1100;
	REQUIRE(alloc(&ctl, 0, 0xc1e00021, 0xc1e00021, &h, SD_NV01_DEVICE_0, &d, sizeof(d)) == SD_NV_OK);
	fs.subDeviceInst = 0;
	REQUIRE(kop(0xc1e00021, 0x1100, SD_NV0080_CTRL_CMD_GPU_FIND_SUBDEVICE_HANDLE, &fs, sizeof(fs)) == SD_NV_ERR_OBJECT_NOT_FOUND);
	ii.gpuId = 0x1234;
	REQUIRE(kop(c, c, SD_NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2, &ii, sizeof(ii)) == SD_NV_ERR_INVALID_ARGUMENT);
	/* Each on its own class; parameters of another size; a handle not there. */
	REQUIRE(kop(c, 0x1001, SD_NV0080_CTRL_CMD_GPU_FIND_SUBDEVICE_HANDLE, &fs, sizeof(fs)) == SD_NV_ERR_NOT_SUPPORTED);
	REQUIRE(kop(c, 0x1000, SD_NV2080_CTRL_CMD_GPU_GET_ID, &id, sizeof(id)) == SD_NV_ERR_NOT_SUPPORTED);
	REQUIRE(kop(c, 0x1000, SD_NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2, &ii, sizeof(ii)) == SD_NV_ERR_NOT_SUPPORTED);
	REQUIRE(kop(c, c, SD_NV2080_CTRL_CMD_GPU_GET_ID, &id, sizeof(id)) == SD_NV_ERR_NOT_SUPPORTED);
	REQUIRE(kop(c, 0x1001, SD_NV2080_CTRL_CMD_GPU_GET_ID, &id, sizeof(id) + 4) == SD_NV_ERR_INVALID_PARAM_STRUCT);
	REQUIRE(kop(c, c, SD_NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2, NULL, sizeof(ii)) == SD_NV_ERR_INVALID_PARAM_STRUCT);
	REQUIRE(kop(c, 0x7777, SD_NV2080_CTRL_CMD_GPU_GET_ID, &id, sizeof(id)) == SD_NV_ERR_OBJECT_NOT_FOUND);
	REQUIRE(kop(0x5555, 0x5555, SD_NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2, &ii, sizeof(ii)) == SD_NV_ERR_INVALID_CLIENT);
	sd_file_release(&ctl);
	REQUIRE(node.clients == NULL);
	gpu_open_mask = 0;
}

/*
 * Channel groups and channels: the driver memory each holds is in the GPU's used figure
 * and in no process's; their parents; a group's free takes its channels, and a device's
 * free both; a GPU without room refuses; parameters as RM reads them.
 */
static void test_channels(void)
{
	struct sd_channel_group_alloc g = { .engineType = 1 };
	struct sd_channel_alloc_head ch = { 0 };
	struct sd_memory_alloc m = vidmem(2 * MiB);
	struct sd_file ctl;
	sd_u64 room;
	sd_u32 h, c;

	sd_file_init(&ctl, &node, SD_CTL_MINOR);
	gpu_open_mask = 1u << 2;
	c = setup(&ctl, 0xc1e00010, 2);
	h = 0x3000;
	REQUIRE(alloc(&ctl, 0, c, 0x1000, &h, SD_KEPLER_CHANNEL_GROUP_A, &g, sizeof(g)) == SD_NV_OK);
	REQUIRE(node.used[2] == SD_GROUP_HELD);
	h = 0x3001;	/* in the group */
	REQUIRE(alloc(&ctl, 1, c, 0x3000, &h, SD_TURING_CHANNEL_GPFIFO_A, &ch, sizeof(ch)) == SD_NV_OK);
	h = 0x3002;	/* under the device, in no group */
	REQUIRE(alloc(&ctl, 0, c, 0x1000, &h, SD_TURING_CHANNEL_GPFIFO_A, &ch, sizeof(ch)) == SD_NV_OK);
	REQUIRE(node.used[2] == SD_GROUP_HELD + 2 * SD_CHANNEL_HELD);
	h = 0x2000;
	REQUIRE(alloc(&ctl, 0, c, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m, sizeof(m)) == SD_NV_OK);
	/* The process's figure is its memory alone (check_ledger checks the rest). */
	{
		sd_u64 listed = 0;

		sd_gpu_clients(&node, 2, add_bytes, &listed);
		REQUIRE(listed == 2 * MiB);
	}
	/* The kernel client asks an object's class by its handle. */
	{
		sd_u64 cls = 0;

		REQUIRE(kop_class(c, 0x3000, SD_GET_HANDLE_INFO_INDEX_CLASSID, &cls) == SD_NV_OK &&
			cls == SD_KEPLER_CHANNEL_GROUP_A);
		REQUIRE(kop_class(c, 0x3001, SD_GET_HANDLE_INFO_INDEX_CLASSID, &cls) == SD_NV_OK &&
			cls == SD_TURING_CHANNEL_GPFIFO_A);
		REQUIRE(kop_class(c, 0x2000, SD_GET_HANDLE_INFO_INDEX_CLASSID, &cls) == SD_NV_OK &&
			cls == SD_NV01_MEMORY_LOCAL_USER);
		REQUIRE(kop_class(c, 0x7777, SD_GET_HANDLE_INFO_INDEX_CLASSID, &cls) == SD_NV_ERR_OBJECT_NOT_FOUND);
		REQUIRE(kop_class(c, 0x3000, SD_GET_HANDLE_INFO_INDEX_PARENT, &cls) == SD_NV_OK && cls == 0x1000);
		REQUIRE(kop_class(c, 0x1000, SD_GET_HANDLE_INFO_INDEX_PARENT, &cls) == SD_NV_OK && cls == c);
		REQUIRE(kop_class(c, 0x3000, 3, &cls) == SD_NV_ERR_INVALID_ARGUMENT);
		REQUIRE(kop_class(0x5555, 0x3000, SD_GET_HANDLE_INFO_INDEX_CLASSID, &cls) == SD_NV_ERR_INVALID_CLIENT);
	}
	/*
	 * A VA space, under a device or subdevice, holds its page directory in no process's
	 * figure; its duplicate keeps it past its own handle's free.
	 */
	{
		struct sd_vaspace_alloc va = { .index = 0 };
		struct sd_nvos55 d = { .hClient = c, .hParent = 0x1000, .hObject = 0x3051,
			.hClientSrc = c, .hObjectSrc = 0x3050 };

		h = 0x3050;
		REQUIRE(alloc(&ctl, 0, c, 0x3000, &h, SD_FERMI_VASPACE_A, &va, sizeof(va)) ==
			SD_NV_ERR_INVALID_OBJECT_PARENT);
		REQUIRE(alloc(&ctl, 1, c, 0x1001, &h, SD_FERMI_VASPACE_A, &va, sizeof(va)) == SD_NV_OK);
		REQUIRE(node.used[2] == SD_GROUP_HELD + 2 * SD_CHANNEL_HELD + 2 * MiB + SD_VASPACE_HELD);
		REQUIRE(ioc(&ctl, SD_ESC_RM_DUP_OBJECT, sizeof(d), &d) == SD_OK);
		REQUIRE(d.status == SD_NV_ERR_INVALID_OBJECT_PARENT);	/* a subdevice's, under a device */
		d.hParent = 0x1001;
		REQUIRE(ioc(&ctl, SD_ESC_RM_DUP_OBJECT, sizeof(d), &d) == SD_OK && d.status == SD_NV_OK);
		REQUIRE(rmfree(&ctl, c, 0x3050) == SD_NV_OK);
		REQUIRE(node.used[2] == SD_GROUP_HELD + 2 * SD_CHANNEL_HELD + 2 * MiB + SD_VASPACE_HELD);
		REQUIRE(rmfree(&ctl, c, 0x3051) == SD_NV_OK);
		REQUIRE(node.used[2] == SD_GROUP_HELD + 2 * SD_CHANNEL_HELD + 2 * MiB);
	}
	/*
	 * A group can be duplicated, under a device, and its duplicate keeps the group's
	 * memory once the group's own handle and its channel are freed; a channel cannot.
	 */
	{
		struct sd_nvos55 d = { .hClient = c, .hParent = 0x1001, .hObject = 0x3021,
			.hClientSrc = c, .hObjectSrc = 0x3000 };
		struct sd_channel_group_alloc g2 = g;

		REQUIRE(ioc(&ctl, SD_ESC_RM_DUP_OBJECT, sizeof(d), &d) == SD_OK);
		REQUIRE(d.status == SD_NV_ERR_INVALID_OBJECT_PARENT);
		d.hParent = 0x1000;
		d.hObjectSrc = 0x3001;
		REQUIRE(ioc(&ctl, SD_ESC_RM_DUP_OBJECT, sizeof(d), &d) == SD_OK);
		REQUIRE(d.status == SD_NV_ERR_INVALID_ARGUMENT);
		h = 0x3030;
		REQUIRE(alloc(&ctl, 0, c, 0x1000, &h, SD_KEPLER_CHANNEL_GROUP_A, &g2, sizeof(g2)) == SD_NV_OK);
		h = 0x3031;
		REQUIRE(alloc(&ctl, 0, c, 0x3030, &h, SD_TURING_CHANNEL_GPFIFO_A, &ch, sizeof(ch)) == SD_NV_OK);
		d.hObjectSrc = 0x3030;
		REQUIRE(ioc(&ctl, SD_ESC_RM_DUP_OBJECT, sizeof(d), &d) == SD_OK);
		REQUIRE(d.status == SD_NV_OK);
		REQUIRE(rmfree(&ctl, c, 0x3030) == SD_NV_OK);
		REQUIRE(rmfree(&ctl, c, 0x3031) == SD_NV_ERR_OBJECT_NOT_FOUND);
		REQUIRE(node.used[2] == 2 * SD_GROUP_HELD + 2 * SD_CHANNEL_HELD + 2 * MiB);
		REQUIRE(rmfree(&ctl, c, 0x3021) == SD_NV_OK);
		REQUIRE(node.used[2] == SD_GROUP_HELD + 2 * SD_CHANNEL_HELD + 2 * MiB);
	}
	/* A group's memory is the driver's own: no dma-buf or nvidia-uvm duplicate of it. */
	{
		struct sd_export_dmabuf e = { .fd = -1, .hClient = c, .totalObjects = 1,
			.numObjects = 1, .totalSize = SD_GROUP_HELD, .handles = { 0x3000 },
			.sizes = { SD_GROUP_HELD } };
		struct sd_dup_info info;
		sd_u32 hold, hdup;

		REQUIRE(sd_dmabuf_dup(&node, 2, &henv, &e, &hold) == SD_NV_ERR_INVALID_OBJECT);
		REQUIRE(sd_uvm_dup(&node, &henv, 2, c, 0x3000, &hdup, &info) ==
			SD_NV_ERR_INVALID_OBJECT_HANDLE);
	}
	/* Parents: a group under a device only; a channel under a device or a group. */
	h = 0x3010;
	REQUIRE(alloc(&ctl, 0, c, 0x1001, &h, SD_KEPLER_CHANNEL_GROUP_A, &g, sizeof(g)) == SD_NV_ERR_INVALID_OBJECT_PARENT);
	REQUIRE(alloc(&ctl, 0, c, 0x3000, &h, SD_KEPLER_CHANNEL_GROUP_A, &g, sizeof(g)) == SD_NV_ERR_INVALID_OBJECT_PARENT);
	REQUIRE(alloc(&ctl, 0, c, c, &h, SD_KEPLER_CHANNEL_GROUP_A, &g, sizeof(g)) == SD_NV_ERR_INVALID_OBJECT_PARENT);
	REQUIRE(alloc(&ctl, 0, c, 0x1001, &h, SD_TURING_CHANNEL_GPFIFO_A, &ch, sizeof(ch)) == SD_NV_ERR_INVALID_OBJECT_PARENT);
	REQUIRE(alloc(&ctl, 0, c, 0x3001, &h, SD_TURING_CHANNEL_GPFIFO_A, &ch, sizeof(ch)) == SD_NV_ERR_INVALID_OBJECT_PARENT);
	/* Memory is no child of a group, nor a duplicate under one. */
	REQUIRE(alloc(&ctl, 0, c, 0x3000, &h, SD_NV01_MEMORY_LOCAL_USER, &m, sizeof(m)) == SD_NV_ERR_INVALID_OBJECT_PARENT);
	{
		struct sd_nvos55 d = { .hClient = c, .hParent = 0x3000, .hObject = 0x3020,
			.hClientSrc = c, .hObjectSrc = 0x2000 };

		REQUIRE(ioc(&ctl, SD_ESC_RM_DUP_OBJECT, sizeof(d), &d) == SD_OK);
		REQUIRE(d.status == SD_NV_ERR_INVALID_OBJECT_PARENT);
	}
	/* The parameters are required, RM's size read. */
	REQUIRE(alloc(&ctl, 0, c, 0x1000, &h, SD_KEPLER_CHANNEL_GROUP_A, NULL, 0) == SD_NV_ERR_INVALID_ARGUMENT);
	REQUIRE(alloc(&ctl, 1, c, 0x1000, &h, SD_TURING_CHANNEL_GPFIFO_A, NULL, 0) == SD_NV_ERR_INVALID_ARGUMENT);
	REQUIRE(node.used[2] == SD_GROUP_HELD + 2 * SD_CHANNEL_HELD + 2 * MiB);
	/* The group's free takes its channel; the other channel stays. */
	REQUIRE(rmfree(&ctl, c, 0x3000) == SD_NV_OK);
	REQUIRE(rmfree(&ctl, c, 0x3001) == SD_NV_ERR_OBJECT_NOT_FOUND);
	REQUIRE(node.used[2] == SD_CHANNEL_HELD + 2 * MiB);
	/* A GPU without room for a group's memory refuses it; a channel's fits. */
	room = node.total[2] - node.used[2];
	REQUIRE(room % (2 * MiB) >= SD_CHANNEL_HELD);
	m = vidmem(room / (2 * MiB) * (2 * MiB));
	h = 0x2001;
	REQUIRE(alloc(&ctl, 0, c, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m, sizeof(m)) == SD_NV_OK);
	h = 0x3000;
	REQUIRE(alloc(&ctl, 0, c, 0x1000, &h, SD_KEPLER_CHANNEL_GROUP_A, &g, sizeof(g)) == SD_NV_ERR_NO_MEMORY);
	REQUIRE(alloc(&ctl, 0, c, 0x1000, &h, SD_TURING_CHANNEL_GPFIFO_A, &ch, sizeof(ch)) == SD_NV_OK);
	REQUIRE(rmfree(&ctl, c, 0x3000) == SD_NV_OK && rmfree(&ctl, c, 0x2001) == SD_NV_OK);
	REQUIRE(alloc(&ctl, 0, c, 0x1000, &h, SD_KEPLER_CHANNEL_GROUP_A, &g, sizeof(g)) == SD_NV_OK);
	/* The device's free takes all. */
	REQUIRE(rmfree(&ctl, c, 0x1000) == SD_NV_OK && node.used[2] == 0);
	h = 0x1000;
	{
		struct sd_nv0080_alloc d = { .deviceId = 2 };

		REQUIRE(alloc(&ctl, 0, c, c, &h, SD_NV01_DEVICE_0, &d, sizeof(d)) == SD_NV_OK);
	}
	h = 0x3000;
	REQUIRE(alloc(&ctl, 0, c, 0x1000, &h, SD_KEPLER_CHANNEL_GROUP_A, &g, sizeof(g)) == SD_NV_OK);
	/* And the file's end, the client's. */
	sd_file_release(&ctl);
	REQUIRE(node.used[2] == 0 && node.clients == NULL);
	gpu_open_mask = 0;
}

struct listed {
	int n;
	sd_u32 pid[4];
	sd_u64 bytes[4];
};

static void list_one(void *arg, sd_u32 pid, sd_u64 bytes)
{
	struct listed *l = arg;

	REQUIRE(l->n < 4);
	l->pid[l->n] = pid;
	l->bytes[l->n++] = bytes;
}

/* (3 MiB in 2 MiB pages, 1 MiB in 64 KiB pages.) Each client holding memory on a GPU is listed with its creator's pid and its bytes
 * there; a client holding nothing there is not. */
static void test_clients_listed(void)
{
	struct sd_file ctl;
	struct sd_memory_alloc m = vidmem(3 * MiB);
	struct listed l = { 0 };
	sd_u32 h;

	sd_file_init(&ctl, &node, SD_CTL_MINOR);
	gpu_open_mask = ~0u;
	caller_pid = 41;
	setup(&ctl, 0xc1e00041, 2);
	caller_pid = 42;
	setup(&ctl, 0xc1e00042, 2);
	caller_pid = 1000;
	h = 0x2000;
	REQUIRE(alloc(&ctl, 0, 0xc1e00041, 0x1001, &h, SD_NV01_MEMORY_LOCAL_USER, &m, sizeof(m)) == SD_NV_OK);
	m = vidmem(MiB);
	h = 0x2001;
	REQUIRE(alloc(&ctl, 1, 0xc1e00041, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m, sizeof(m)) == SD_NV_OK);
	sd_gpu_clients(&node, 2, list_one, &l);
	REQUIRE(l.n == 1 && l.pid[0] == 41 && l.bytes[0] == 5 * MiB);
	h = 0x2000;
	REQUIRE(alloc(&ctl, 1, 0xc1e00042, 0x1001, &h, SD_NV01_MEMORY_LOCAL_USER, &m, sizeof(m)) == SD_NV_OK);
	l.n = 0;
	sd_gpu_clients(&node, 2, list_one, &l);
	REQUIRE(l.n == 2 && l.pid[0] + l.pid[1] == 83 && l.bytes[0] + l.bytes[1] == 6 * MiB);
	l.n = 0;
	sd_gpu_clients(&node, 1, list_one, &l);
	REQUIRE(l.n == 0);
	sd_file_release(&ctl);
	l.n = 0;
	sd_gpu_clients(&node, 2, list_one, &l);
	REQUIRE(l.n == 0 && node.clients == NULL);
}

/*
 * A device's own VA space, made by the first channel group that names none: with
 * hClientShare its own client, a page directory the device holds until its free; with
 * 0 (the GPU's global one), with vaMode MULTIPLE_VASPACES, or a group naming a VA space:
 * none. Another client's share is not modelled.
 */
static void test_device_vas(void)
{
	struct sd_channel_group_alloc g = { .engineType = 1 };
	struct sd_vaspace_alloc va = { .index = 0 };
	struct sd_nv0080_alloc d = { .deviceId = 2, .hClientShare = 0x20 };
	struct sd_file ctl;
	sd_u32 h;

	sd_file_init(&ctl, &node, SD_CTL_MINOR);
	gpu_open_mask = 1u << 2;
	h = 0x20;
	REQUIRE(alloc(&ctl, 0, 0, 0, &h, SD_NV01_ROOT_CLIENT, NULL, 0) == SD_NV_OK);
	h = 0x1000;
	REQUIRE(alloc(&ctl, 0, 0x20, 0x20, &h, SD_NV01_DEVICE_0, &d, sizeof(d)) == SD_NV_OK);
	REQUIRE(node.used[2] == 0);
	h = 0x3000;
	REQUIRE(alloc(&ctl, 0, 0x20, 0x1000, &h, SD_KEPLER_CHANNEL_GROUP_A, &g, sizeof(g)) == SD_NV_OK);
	REQUIRE(node.used[2] == SD_GROUP_HELD + SD_VASPACE_HELD);
	h = 0x3001;
	REQUIRE(alloc(&ctl, 1, 0x20, 0x1000, &h, SD_KEPLER_CHANNEL_GROUP_A, &g, sizeof(g)) == SD_NV_OK);
	REQUIRE(rmfree(&ctl, 0x20, 0x3000) == SD_NV_OK && rmfree(&ctl, 0x20, 0x3001) == SD_NV_OK);
	REQUIRE(node.used[2] == SD_VASPACE_HELD);
	REQUIRE(rmfree(&ctl, 0x20, 0x1000) == SD_NV_OK && node.used[2] == 0);
	/* A group naming a VA space takes none of the device's. */
	h = 0x1000;
	REQUIRE(alloc(&ctl, 0, 0x20, 0x20, &h, SD_NV01_DEVICE_0, &d, sizeof(d)) == SD_NV_OK);
	h = 0x5000;
	REQUIRE(alloc(&ctl, 0, 0x20, 0x1000, &h, SD_FERMI_VASPACE_A, &va, sizeof(va)) == SD_NV_OK);
	g.hVASpace = 0x5000;
	h = 0x3000;
	REQUIRE(alloc(&ctl, 0, 0x20, 0x1000, &h, SD_KEPLER_CHANNEL_GROUP_A, &g, sizeof(g)) == SD_NV_OK);
	REQUIRE(node.used[2] == SD_GROUP_HELD + SD_VASPACE_HELD);
	REQUIRE(rmfree(&ctl, 0x20, 0x1000) == SD_NV_OK && node.used[2] == 0);
	g.hVASpace = 0;
	/* The global one; a device of many VA spaces; another client's, not modelled. */
	for (int i = 0; i < 3; i++) {
		d.hClientShare = i == 0 ? 0 : i == 1 ? 0x20 : 0x21;
		d.vaMode = i == 1 ? SD_DEVICE_VAMODE_MULTIPLE_VASPACES : 0;
		h = 0x1000;
		REQUIRE(alloc(&ctl, 0, 0x20, 0x20, &h, SD_NV01_DEVICE_0, &d, sizeof(d)) == SD_NV_OK);
		h = 0x3000;
		REQUIRE(alloc(&ctl, 0, 0x20, 0x1000, &h, SD_KEPLER_CHANNEL_GROUP_A, &g, sizeof(g)) ==
			(i == 2 ? SD_NV_ERR_NOT_SUPPORTED : SD_NV_OK));
		REQUIRE(node.used[2] == (i == 2 ? 0 : SD_GROUP_HELD));
		REQUIRE(rmfree(&ctl, 0x20, 0x1000) == SD_NV_OK && node.used[2] == 0);
	}
	/* The client's end takes the device's VA space too. */
	d.hClientShare = 0x20;
	d.vaMode = 0;
	h = 0x1000;
	REQUIRE(alloc(&ctl, 0, 0x20, 0x20, &h, SD_NV01_DEVICE_0, &d, sizeof(d)) == SD_NV_OK);
	h = 0x3000;
	REQUIRE(alloc(&ctl, 0, 0x20, 0x1000, &h, SD_KEPLER_CHANNEL_GROUP_A, &g, sizeof(g)) == SD_NV_OK);
	sd_file_release(&ctl);
	REQUIRE(node.used[2] == 0 && node.clients == NULL);
	gpu_open_mask = 0;
}

static void test_device_rules(void)
{
	struct sd_file ctl;
	struct sd_nv0080_alloc d = { .deviceId = 2 };
	struct sd_nv2080_alloc s = { .subDeviceId = 1 };
	sd_u32 h;

	sd_file_init(&ctl, &node, SD_CTL_MINOR);
	h = 0x10;
	REQUIRE(alloc(&ctl, 0, 0, 0, &h, SD_NV01_ROOT_CLIENT, NULL, 0) == SD_NV_OK);
	/* Only with /dev/nvidia2 open. */
	gpu_open_mask = 0;
	h = 0x1000;
	REQUIRE(alloc(&ctl, 0, 0x10, 0x10, &h, SD_NV01_DEVICE_0, &d, sizeof(d)) == SD_NV_ERR_INSUFFICIENT_PERMISSIONS);
	d.deviceId = 4;
	gpu_open_mask = ~0u;
	REQUIRE(alloc(&ctl, 0, 0x10, 0x10, &h, SD_NV01_DEVICE_0, &d, sizeof(d)) == SD_NV_ERR_INVALID_ARGUMENT);
	d.deviceId = 2;
	REQUIRE(alloc(&ctl, 0, 0x10, 0x10, &h, SD_NV01_DEVICE_0, NULL, 0) == SD_NV_ERR_INVALID_ARGUMENT);
	REQUIRE(alloc(&ctl, 0, 0x10, 0x10, &h, SD_NV01_DEVICE_0, &d, sizeof(d)) == SD_NV_OK);
	/* A device's parent is the client. */
	h = 0x1001;
	REQUIRE(alloc(&ctl, 0, 0x10, 0x1000, &h, SD_NV01_DEVICE_0, &d, sizeof(d)) == SD_NV_ERR_INVALID_OBJECT_PARENT);
	REQUIRE(alloc(&ctl, 0, 0x10, 0x10, &h, SD_NV20_SUBDEVICE_0, &s, sizeof(s)) == SD_NV_ERR_INVALID_OBJECT_PARENT);
	REQUIRE(alloc(&ctl, 0, 0x10, 0x1000, &h, SD_NV20_SUBDEVICE_0, &s, sizeof(s)) == SD_NV_ERR_INVALID_ARGUMENT);
	s.subDeviceId = 0;
	REQUIRE(alloc(&ctl, 0, 0x10, 0x1000, &h, SD_NV20_SUBDEVICE_0, &s, sizeof(s)) == SD_NV_OK);
	/* One device of a GPU a client (RM's deviceInit); another GPU's may join it. */
	h = 0x1100;
	REQUIRE(alloc(&ctl, 0, 0x10, 0x10, &h, SD_NV01_DEVICE_0, &d, sizeof(d)) == SD_NV_ERR_INSUFFICIENT_RESOURCES);
	d.deviceId = 3;
	REQUIRE(alloc(&ctl, 0, 0x10, 0x10, &h, SD_NV01_DEVICE_0, &d, sizeof(d)) == SD_NV_OK);
	REQUIRE(rmfree(&ctl, 0x10, 0x1000) == SD_NV_OK);
	d.deviceId = 2;
	h = 0x1000;
	REQUIRE(alloc(&ctl, 0, 0x10, 0x10, &h, SD_NV01_DEVICE_0, &d, sizeof(d)) == SD_NV_OK);
	h = 0x1001;
	REQUIRE(alloc(&ctl, 0, 0x10, 0x1000, &h, SD_NV20_SUBDEVICE_0, &s, sizeof(s)) == SD_NV_OK);
	/* Unknown classes. */
	h = 0x1002;
	REQUIRE(alloc(&ctl, 0, 0x10, 0x1000, &h, 0xc2, &s, sizeof(s)) == SD_NV_ERR_INVALID_CLASS);
	REQUIRE(alloc(&ctl, 1, 0x10, 0x1000, &h, 0xdeadbeef, NULL, 0) == SD_NV_ERR_INVALID_CLASS);
	sd_file_release(&ctl);
	REQUIRE(node.clients == NULL);
}

static void test_memory_rules(void)
{
	const sd_u32 pci = SD_ATTR_LOCATION_PCI << SD_ATTR_LOCATION_SHIFT;
	struct sd_file ctl;
	struct sd_memory_alloc m;
	sd_u64 listed;
	sd_u32 h = 0x3000;

	sd_file_init(&ctl, &node, SD_CTL_MINOR);
	gpu_open_mask = 1;
	setup(&ctl, 0x20, 0);
	m = vidmem(MiB);
	m.owner = 0;
	REQUIRE(alloc(&ctl, 0, 0x20, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m, sizeof(m)) == SD_NV_ERR_INVALID_OWNER);
	m.owner = 0xffffffff;
	REQUIRE(alloc(&ctl, 0, 0x20, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m, sizeof(m)) == SD_NV_ERR_INVALID_OWNER);
	m = vidmem(MiB);
	m.attr = pci;
	REQUIRE(alloc(&ctl, 0, 0x20, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m, sizeof(m)) == SD_NV_ERR_INVALID_ARGUMENT);
	m = vidmem(MiB);
	m.flags = SD_ALLOC_FLAGS_VIRTUAL;
	REQUIRE(alloc(&ctl, 0, 0x20, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m, sizeof(m)) == SD_NV_ERR_INVALID_ARGUMENT);
	m = vidmem(MiB);
	m.internalflags = 1;
	REQUIRE(alloc(&ctl, 0, 0x20, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m, sizeof(m)) == SD_NV_ERR_INVALID_ARGUMENT);
	m = vidmem(MiB);
	m.rangeHi = 1;
	REQUIRE(alloc(&ctl, 0, 0x20, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m, sizeof(m)) == SD_NV_ERR_INVALID_ARGUMENT);
	m = vidmem(0);
	REQUIRE(alloc(&ctl, 0, 0x20, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m, sizeof(m)) == SD_NV_ERR_INVALID_ARGUMENT);
	/* 64-bit overflow of the rounding, and more than the GPU. */
	m = vidmem(~0ULL);
	REQUIRE(alloc(&ctl, 0, 0x20, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m, sizeof(m)) == SD_NV_ERR_NO_MEMORY);
	m = vidmem(15109 * MiB + 1);
	REQUIRE(alloc(&ctl, 0, 0x20, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m, sizeof(m)) == SD_NV_ERR_NO_MEMORY);
	REQUIRE(node.used[0] == 0);
	/*
	 * System memory: sysmemConstruct's refusals; 4 KiB pages, handed back; host
	 * memory, in no GPU's figure nor any process's.
	 */
	m.attr = pci | SD_ATTR_PAGE_SIZE_BIG << SD_ATTR_PAGE_SIZE_SHIFT;
	REQUIRE(alloc(&ctl, 0, 0x20, 0x1000, &h, SD_NV01_MEMORY_SYSTEM, &m, sizeof(m)) == SD_NV_ERR_NOT_SUPPORTED);
	m = vidmem(MiB + 1);
	REQUIRE(alloc(&ctl, 0, 0x20, 0x1000, &h, SD_NV01_MEMORY_SYSTEM, &m, sizeof(m)) == SD_NV_ERR_INVALID_ARGUMENT);
	m.attr = pci;
	m.hVASpace = 0x1234;
	REQUIRE(alloc(&ctl, 0, 0x20, 0x1000, &h, SD_NV01_MEMORY_SYSTEM, &m, sizeof(m)) == SD_NV_ERR_INVALID_ARGUMENT);
	m.hVASpace = 0;
	m.flags = SD_ALLOC_FLAGS_VIRTUAL;
	REQUIRE(alloc(&ctl, 0, 0x20, 0x1000, &h, SD_NV01_MEMORY_SYSTEM, &m, sizeof(m)) == SD_NV_ERR_INVALID_ARGUMENT);
	m.flags = 0;
	m.owner = 0;
	REQUIRE(alloc(&ctl, 0, 0x20, 0x1000, &h, SD_NV01_MEMORY_SYSTEM, &m, sizeof(m)) == SD_NV_ERR_INVALID_OWNER);
	m.owner = 0xcafe;
	REQUIRE(alloc(&ctl, 0, 0x20, 0x1000, &h, SD_NV01_MEMORY_SYSTEM, &m, sizeof(m)) == SD_NV_OK);
	memcpy(&m, umem + 4096, sizeof(m));
	REQUIRE(m.size == MiB + 4096 && m.limit == MiB + 4095 &&
		((m.attr >> SD_ATTR_PAGE_SIZE_SHIFT) & SD_ATTR_PAGE_SIZE_MASK) == SD_ATTR_PAGE_SIZE_4KB);
	listed = 0;
	sd_gpu_clients(&node, 0, add_bytes, &listed);
	REQUIRE(node.used[0] == 0 && listed == 0);
	REQUIRE(rmfree(&ctl, 0x20, 0x3000) == SD_NV_OK);
	/* The whole GPU in one piece (15109 MiB is not a multiple of 2 MiB: 4 KiB pages). */
	m = vidmem(15109 * MiB);
	m.attr = SD_ATTR_PAGE_SIZE_4KB << SD_ATTR_PAGE_SIZE_SHIFT;
	REQUIRE(alloc(&ctl, 0, 0x20, 0x1001, &h, SD_NV01_MEMORY_LOCAL_USER, &m, sizeof(m)) == SD_NV_OK);
	REQUIRE(node.used[0] == 15109 * MiB);
	m = vidmem(1);
	h = 0x3001;
	REQUIRE(alloc(&ctl, 0, 0x20, 0x1001, &h, SD_NV01_MEMORY_LOCAL_USER, &m, sizeof(m)) == SD_NV_ERR_NO_MEMORY);
	REQUIRE(rmfree(&ctl, 0x20, 0x3000) == SD_NV_OK && node.used[0] == 0);
	/*
	 * Page sizes: small allocations in 4 KiB and 64 KiB pages, huge 512 MiB on request.
	 * One of 4 KiB pages is 4096 bytes to RM (its size, the process's figure) and holds
	 * PMA's 64 KiB page of the GPU.
	 */
	m = vidmem(100);
	REQUIRE(alloc(&ctl, 0, 0x20, 0x1001, &h, SD_NV01_MEMORY_LOCAL_USER, &m, sizeof(m)) == SD_NV_OK);
	listed = 0;
	sd_gpu_clients(&node, 0, add_bytes, &listed);
	REQUIRE(listed == 4096 && node.used[0] == 65536);
	m = vidmem(65537);
	h = 0x3002;
	REQUIRE(alloc(&ctl, 0, 0x20, 0x1001, &h, SD_NV01_MEMORY_LOCAL_USER, &m, sizeof(m)) == SD_NV_OK);
	REQUIRE(node.used[0] == 65536 + 2 * 65536);
	m = vidmem(1);
	m.attr = SD_ATTR_PAGE_SIZE_HUGE << SD_ATTR_PAGE_SIZE_SHIFT;
	m.attr2 = SD_ATTR2_PAGE_SIZE_HUGE_512MB << SD_ATTR2_PAGE_SIZE_HUGE_SHIFT;
	h = 0x3003;
	REQUIRE(alloc(&ctl, 0, 0x20, 0x1001, &h, SD_NV01_MEMORY_LOCAL_USER, &m, sizeof(m)) == SD_NV_OK);
	REQUIRE(node.used[0] == 65536 + 2 * 65536 + 512 * MiB);
	/* Freeing the subdevice frees the memory under it, and only that. */
	h = 0x3004;
	m = vidmem(2 * MiB);
	REQUIRE(alloc(&ctl, 0, 0x20, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m, sizeof(m)) == SD_NV_OK);
	REQUIRE(rmfree(&ctl, 0x20, 0x1001) == SD_NV_OK && node.used[0] == 2 * MiB);
	sd_file_release(&ctl);
	REQUIRE(node.used[0] == 0 && node.clients == NULL);
}

static void test_bad_input(void)
{
	struct sd_file ctl, gpu;
	struct sd_memory_alloc m = vidmem(MiB);
	struct sd_nvos21 p = { 0 };
	struct sd_xfer x;
	sd_u32 h = 0x4000;

	sd_file_init(&ctl, &node, SD_CTL_MINOR);
	sd_file_init(&gpu, &node, 0);
	gpu_open_mask = 1;
	setup(&ctl, 0x30, 0);
	/* Sizes other than NVOS21 and NVOS64; RM on a GPU node; unknown escapes. */
	REQUIRE(ioc(&ctl, SD_ESC_RM_ALLOC, 40, &p) == SD_RC_INVAL);
	REQUIRE(ioc(&ctl, SD_ESC_RM_ALLOC, 0, &p) == SD_RC_INVAL);
	REQUIRE(ioc(&gpu, SD_ESC_RM_ALLOC, sizeof(p), &p) == SD_RC_INVAL);
	REQUIRE(ioc(&ctl, SD_ESC_RM_FREE, 12, &p) == SD_RC_INVAL);
	REQUIRE(ioc(&gpu, SD_ESC_RM_FREE, 16, &p) == SD_RC_INVAL);
	REQUIRE(ioc(&ctl, 0x2A, 32, &p) == SD_RC_INVAL);
	REQUIRE(ioc(&ctl, 0, 0, &p) == SD_RC_INVAL);
	/* A parameter block that faults, NULL or past the address space. */
	REQUIRE(sd_entry(&ctl, &henv, SD_ESC_RM_ALLOC, 32, 0) == SD_RC_FAULT);
	REQUIRE(sd_entry(&ctl, &henv, SD_ESC_RM_ALLOC, 32, UBASE + USIZE - 16) == SD_RC_FAULT);
	REQUIRE(sd_entry(&ctl, &henv, SD_ESC_RM_ALLOC, 32, ~0ULL - 8) == SD_RC_FAULT);
	/* Class parameters that fault: the status says so, nothing is allocated. */
	p = (struct sd_nvos21){ .hRoot = 0x30, .hObjectParent = 0x1000, .hObjectNew = h,
		.hClass = SD_NV01_MEMORY_LOCAL_USER, .pAllocParms = UBASE + USIZE - 64 };
	memcpy(umem + USIZE - 64, &m, 64);
	REQUIRE(ioc(&ctl, SD_ESC_RM_ALLOC, sizeof(p), &p) == SD_OK && p.status == SD_NV_ERR_INVALID_ADDRESS);
	p.pAllocParms = 0;
	REQUIRE(ioc(&ctl, SD_ESC_RM_ALLOC, sizeof(p), &p) == SD_OK && p.status == SD_NV_ERR_INVALID_ARGUMENT);
	/* Unaligned parameters are read as bytes, as copy_from_user does. */
	memcpy(umem + 4096 + 3, &m, sizeof(m));
	p.pAllocParms = PARAMS + 3;
	REQUIRE(ioc(&ctl, SD_ESC_RM_ALLOC, sizeof(p), &p) == SD_OK && p.status == SD_NV_OK);
	REQUIRE(node.used[0] == MiB);	/* 1 MiB in 64 KiB pages */
	/* The class's own size is copied, whatever paramsSize says. */
	memcpy(umem + 4096, &m, sizeof(m));
	p.pAllocParms = PARAMS;
	p.paramsSize = 0xffffffff;
	p.hObjectNew = 0x4001;
	REQUIRE(ioc(&ctl, SD_ESC_RM_ALLOC, sizeof(p), &p) == SD_OK && p.status == SD_NV_OK);
	/* The 535 layout is 120 bytes: the last ones of the page are enough. */
	memcpy(umem + USIZE - SD_MEMPARAMS_SIZE_OLD, &m, SD_MEMPARAMS_SIZE_OLD);
	p.pAllocParms = UBASE + USIZE - SD_MEMPARAMS_SIZE_OLD;
	p.hObjectNew = 0x4002;
	REQUIRE(ioc(&ctl, SD_ESC_RM_ALLOC, sizeof(p), &p) == SD_OK && p.status == SD_NV_OK);
	/* XFER: its own size, its payload's limit, a faulting payload, no nesting. */
	REQUIRE(sd_entry(&ctl, &henv, SD_ESC_IOCTL_XFER_CMD, 24, UBASE) == SD_RC_INVAL);
	x = (struct sd_xfer){ .cmd = SD_ESC_RM_FREE, .size = SD_MAX_IOCTL_SIZE + 1, .ptr = UBASE + 64 };
	memcpy(umem, &x, sizeof(x));
	REQUIRE(sd_entry(&ctl, &henv, SD_ESC_IOCTL_XFER_CMD, sizeof(x), UBASE) == SD_RC_INVAL);
	x.size = 16;
	x.ptr = 8;
	memcpy(umem, &x, sizeof(x));
	REQUIRE(sd_entry(&ctl, &henv, SD_ESC_IOCTL_XFER_CMD, sizeof(x), UBASE) == SD_RC_FAULT);
	x = (struct sd_xfer){ .cmd = SD_ESC_IOCTL_XFER_CMD, .size = 16, .ptr = UBASE };
	memcpy(umem, &x, sizeof(x));
	REQUIRE(sd_entry(&ctl, &henv, SD_ESC_IOCTL_XFER_CMD, sizeof(x), UBASE) == SD_RC_INVAL);
	REQUIRE(sd_entry(&ctl, &henv, SD_ESC_IOCTL_XFER_CMD, sizeof(x), 0) == SD_RC_FAULT);
	/* No kernel memory: -ENOMEM for the copy, NV_ERR_NO_MEMORY for an object. */
	fail_alloc_after = 0;
	REQUIRE(ioc(&ctl, SD_ESC_RM_ALLOC, sizeof(p), &p) == SD_RC_NOMEM);
	fail_alloc_after = 1;
	p.hObjectNew = 0x4003;
	p.pAllocParms = PARAMS;
	REQUIRE(ioc(&ctl, SD_ESC_RM_ALLOC, sizeof(p), &p) == SD_OK && p.status == SD_NV_ERR_NO_MEMORY);
	fail_alloc_after = -1;
	sd_file_release(&ctl);
	REQUIRE(node.used[0] == 0 && node.clients == NULL);
}

/* Both layouts and the XFER path allocate the same way; 545+ copies 128 bytes. */
static void test_layouts(void)
{
	struct sd_node n550;
	struct sd_file ctl;
	struct sd_memory_alloc m = vidmem(2 * MiB);
	struct sd_nvos64 p;
	struct sd_rm_api_version v = { .cmd = SD_VERSION_CMD_QUERY };

	REQUIRE(node.memparams_size == 120);
	REQUIRE(sd_node_init(&n550, 2, 1024 * MiB, "550.163.01") == SD_OK && n550.memparams_size == 128);
	REQUIRE(sd_node_init(&n550, 2, 1024 * MiB, "545.23.06") == SD_OK && n550.memparams_size == 128);
	REQUIRE(sd_node_init(&n550, 2, 1024 * MiB, "545.23.05") == SD_OK && n550.memparams_size == 120);
	REQUIRE(sd_node_init(&n550, 2, 1024 * MiB, "535") != SD_OK);
	REQUIRE(sd_node_init(&n550, 2, 1024 * MiB, "535.x") != SD_OK);
	REQUIRE(sd_node_init(&n550, 0, 1024 * MiB, "535.1") != SD_OK);
	REQUIRE(sd_node_init(&n550, 17, 1024 * MiB, "535.1") != SD_OK);
	REQUIRE(sd_node_init(&n550, 2, 1024 * MiB, "550.163.01") == SD_OK);
	sd_file_init(&ctl, &n550, SD_CTL_MINOR);
	REQUIRE(sd_entry(&ctl, &henv, SD_ESC_CHECK_VERSION_STR, sizeof(v), (memcpy(umem, &v, sizeof(v)), UBASE)) == SD_OK);
	REQUIRE(!strcmp(((struct sd_rm_api_version *)umem)->versionString, "550.163.01"));
	gpu_open_mask = 2;
	{
		struct sd_nvos21 c = { .hClass = SD_NV01_ROOT_CLIENT, .hObjectNew = 0x50 };
		struct sd_nv0080_alloc d = { .deviceId = 1 };
		struct sd_xfer x = { .cmd = SD_ESC_RM_ALLOC, .size = sizeof(c), .ptr = UBASE + 8192 };

		memcpy(umem, &x, sizeof(x));
		memcpy(umem + 8192, &c, sizeof(c));
		REQUIRE(sd_entry(&ctl, &henv, SD_ESC_IOCTL_XFER_CMD, sizeof(x), UBASE) == SD_OK);
		REQUIRE(((struct sd_nvos21 *)(umem + 8192))->status == SD_NV_OK);
		p = (struct sd_nvos64){ .hRoot = 0x50, .hObjectParent = 0x50, .hObjectNew = 0x1000,
			.hClass = SD_NV01_DEVICE_0, .pAllocParms = PARAMS };
		memcpy(umem + 4096, &d, sizeof(d));
		memcpy(umem, &p, sizeof(p));
		REQUIRE(sd_entry(&ctl, &henv, SD_ESC_RM_ALLOC, sizeof(p), UBASE) == SD_OK);
		REQUIRE(((struct sd_nvos64 *)umem)->status == SD_NV_OK);
	}
	/* 128 bytes: the 120 last bytes of the space are not enough any more. */
	memcpy(umem + USIZE - 120, &m, 120);
	p = (struct sd_nvos64){ .hRoot = 0x50, .hObjectParent = 0x1000, .hObjectNew = 0x2000,
		.hClass = SD_NV01_MEMORY_LOCAL_USER, .pAllocParms = UBASE + USIZE - 120 };
	memcpy(umem, &p, sizeof(p));
	REQUIRE(sd_entry(&ctl, &henv, SD_ESC_RM_ALLOC, sizeof(p), UBASE) == SD_OK);
	REQUIRE(((struct sd_nvos64 *)umem)->status == SD_NV_ERR_INVALID_ADDRESS);
	p.pAllocParms = PARAMS;
	memcpy(umem + 4096, &m, sizeof(m));
	memcpy(umem, &p, sizeof(p));
	REQUIRE(sd_entry(&ctl, &henv, SD_ESC_RM_ALLOC, sizeof(p), UBASE) == SD_OK);
	REQUIRE(((struct sd_nvos64 *)umem)->status == SD_NV_OK && n550.used[1] == 2 * MiB);
	sd_file_release(&ctl);
	REQUIRE(n550.used[1] == 0 && n550.clients == NULL);
}

/* rm_kernel_rmapi_op: a kernel client asks about and frees any file's objects. */
static sd_u32 kop_info(sd_u32 client, sd_u32 obj, struct sd_nv0041_surface_info *list, sd_u32 n,
		       sd_u32 psize)
{
	struct sd_nv0041_get_surface_info gp = { .surfaceInfoListSize = n,
		.surfaceInfoList = (sd_u64)(unsigned long)list };
	struct sd_rmapi_ops ops = { .op = SD_NV04_CONTROL };

	ops.params.control = (struct sd_nvos54){ .hClient = client, .hObject = obj,
		.cmd = SD_NV0041_CTRL_CMD_GET_SURFACE_INFO, .params = (sd_u64)(unsigned long)&gp,
		.paramsSize = psize };
	sd_kernel_op(&node, &henv, &ops);
	check_ledger(&node);
	return ops.params.control.status;
}

static void test_kernel_client(void)
{
	struct sd_memory_alloc m = vidmem(3 * MiB);
	struct sd_nv0041_surface_info l[2] = {
		{ SD_NV0041_SURFACE_INFO_INDEX_PHYS_SIZE, 0 },
		{ SD_NV0041_SURFACE_INFO_INDEX_ADDR_SPACE_TYPE, 0 } };
	struct sd_rmapi_ops ops = { .op = SD_NV01_FREE };
	struct sd_file ctl;
	sd_u32 h = 0x2000;

	sd_file_init(&ctl, &node, SD_CTL_MINOR);
	gpu_open_mask = 1u << 2;
	setup(&ctl, 0xc1e00007, 2);
	REQUIRE(alloc(&ctl, 0, 0xc1e00007, 0x1001, &h, SD_NV01_MEMORY_LOCAL_USER, &m, sizeof(m)) == SD_NV_OK);
	/* The size the GPU holds (4 MiB in 2 MiB pages) in 4 KiB units, and where. */
	REQUIRE(kop_info(0xc1e00007, 0x2000, l, 2, sizeof(struct sd_nv0041_get_surface_info)) == SD_NV_OK);
	REQUIRE(l[0].data == 4 * MiB / 4096 && l[1].data == SD_ADDR_SPACE_TYPE_VIDMEM);
	/* Not a memory object; unknown object, client; wrong block size; unknown index. */
	REQUIRE(kop_info(0xc1e00007, 0x1000, l, 2, sizeof(struct sd_nv0041_get_surface_info)) == SD_NV_ERR_NOT_SUPPORTED);
	REQUIRE(kop_info(0xc1e00007, 0x2999, l, 2, sizeof(struct sd_nv0041_get_surface_info)) == SD_NV_ERR_OBJECT_NOT_FOUND);
	REQUIRE(kop_info(0xc1e00008, 0x2000, l, 2, sizeof(struct sd_nv0041_get_surface_info)) == SD_NV_ERR_INVALID_CLIENT);
	REQUIRE(kop_info(0xc1e00007, 0x2000, l, 2, 8) == SD_NV_ERR_INVALID_PARAM_STRUCT);
	l[1].index = 0x77;
	REQUIRE(kop_info(0xc1e00007, 0x2000, l, 2, sizeof(struct sd_nv0041_get_surface_info)) == SD_NV_ERR_INVALID_ARGUMENT);
	/* An empty list is answered NV_OK, as RM does. */
	REQUIRE(kop_info(0xc1e00007, 0x2000, NULL, 0, sizeof(struct sd_nv0041_get_surface_info)) == SD_NV_OK);
	/* An operation it does not serve leaves the block alone. */
	ops.op = 0x15;	/* NV04_ALLOC */
	ops.params.free.status = 0x1234;
	sd_kernel_op(&node, &henv, &ops);
	REQUIRE(ops.params.free.status == 0x1234);
	/* A kernel free of another file's object: no file of its own needed. */
	ops.op = SD_NV01_FREE;
	ops.params.free = (struct sd_nvos00){ .hRoot = 0xc1e00007, .hObjectOld = 0x2000 };
	sd_kernel_op(&node, &henv, &ops);
	REQUIRE(ops.params.free.status == SD_NV_OK && node.used[2] == 0);
	sd_kernel_op(&node, &henv, &ops);
	REQUIRE(ops.params.free.status == SD_NV_ERR_OBJECT_NOT_FOUND);
	ops.params.free = (struct sd_nvos00){ .hRoot = 0xc1e00007, .hObjectOld = 0xc1e00007 };
	sd_kernel_op(&node, &henv, &ops);
	REQUIRE(ops.params.free.status == SD_NV_OK && node.clients == NULL);
	sd_file_release(&ctl);
}

static sd_u32 dup(struct sd_file *f, sd_u32 client, sd_u32 parent, sd_u32 *h, sd_u32 csrc, sd_u32 osrc)
{
	struct sd_nvos55 p = { .hClient = client, .hParent = parent, .hObject = *h,
		.hClientSrc = csrc, .hObjectSrc = osrc };

	REQUIRE(ioc(f, SD_ESC_RM_DUP_OBJECT, sizeof(p), &p) == SD_OK);
	*h = p.hObject;
	return p.status;
}

/*
 * RM_DUP_OBJECT: a second name for the same pages, the GPU holding them until the last
 * name goes; RM's checks in its order; across clients only within one process.
 */
static void test_dup(void)
{
	struct sd_memory_alloc m = vidmem(3 * MiB);
	struct sd_nv0041_surface_info si = { SD_NV0041_SURFACE_INFO_INDEX_PHYS_SIZE, 0 };
	struct sd_file ctl, ctl2, gpu;
	struct listed l = { 0 };
	struct sd_nvos55 p = { 0 };
	sd_u32 h;

	sd_file_init(&ctl, &node, SD_CTL_MINOR);
	sd_file_init(&ctl2, &node, SD_CTL_MINOR);
	sd_file_init(&gpu, &node, 1);
	gpu_open_mask = 1u << 1;
	caller_pid = 51;
	setup(&ctl, 0xc1e00051, 1);
	/* The same process's client on another file: RM's share rule is by process. */
	setup(&ctl2, 0xc1e00052, 1);
	caller_pid = 61;
	setup(&ctl2, 0xc1e00061, 1);
	h = 0x2000;
	REQUIRE(alloc(&ctl, 0, 0xc1e00051, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m, sizeof(m)) == SD_NV_OK);
	REQUIRE(node.used[1] == 4 * MiB);

	/* In the same client, a handle RM picks; the pages are not taken twice. */
	h = 0;
	REQUIRE(dup(&ctl, 0xc1e00051, 0x1000, &h, 0xc1e00051, 0x2000) == SD_NV_OK);
	REQUIRE(h >= SD_OBJ_HANDLE_BASE && h < SD_OBJ_HANDLE_BASE + SD_OBJ_HANDLE_RANGE);
	REQUIRE(node.used[1] == 4 * MiB);
	/* Across clients of one process, from another file: its own client is the target. */
	h = 0x3000;
	REQUIRE(dup(&ctl2, 0xc1e00052, 0x1000, &h, 0xc1e00051, 0x2000) == SD_NV_OK && h == 0x3000);
	REQUIRE(node.used[1] == 4 * MiB);
	/* Another process may not: RM's default policy, RS_SHARE_TYPE_PID. */
	h = 0x3000;
	REQUIRE(dup(&ctl2, 0xc1e00061, 0x1000, &h, 0xc1e00051, 0x2000) == SD_NV_ERR_INSUFFICIENT_PERMISSIONS);
	/* RM's order: the target client must be the caller's; the source must exist and copy. */
	REQUIRE(dup(&ctl, 0xc1e00052, 0x1000, &h, 0xc1e00051, 0x2000) == SD_NV_ERR_INVALID_CLIENT);
	REQUIRE(dup(&ctl, 0xc1e00051, 0x1000, &h, 0xc1e00099, 0x2000) == SD_NV_ERR_INVALID_CLIENT);
	REQUIRE(dup(&ctl, 0xc1e00051, 0x1000, &h, 0xc1e00051, 0x2999) == SD_NV_ERR_OBJECT_NOT_FOUND);
	REQUIRE(dup(&ctl, 0xc1e00051, 0x1000, &h, 0xc1e00051, 0x1000) == SD_NV_ERR_INVALID_ARGUMENT);
	REQUIRE(dup(&ctl, 0xc1e00051, 0x1000, &h, 0xc1e00051, 0xc1e00051) == SD_NV_ERR_INVALID_ARGUMENT);
	h = 0x2000;
	REQUIRE(dup(&ctl, 0xc1e00051, 0x1000, &h, 0xc1e00051, 0x2000) == SD_NV_ERR_INSERT_DUPLICATE_NAME);
	h = 0xc1e00051;
	REQUIRE(dup(&ctl, 0xc1e00051, 0x1000, &h, 0xc1e00051, 0x2000) == SD_NV_ERR_INVALID_OBJECT_HANDLE);
	h = 0x3001;
	REQUIRE(dup(&ctl, 0xc1e00051, 0x7777, &h, 0xc1e00051, 0x2000) == SD_NV_ERR_OBJECT_NOT_FOUND);
	/* Under a device or subdevice as the source is, never the client or memory. */
	REQUIRE(dup(&ctl, 0xc1e00051, 0x1001, &h, 0xc1e00051, 0x2000) == SD_NV_ERR_INVALID_OBJECT_PARENT);
	REQUIRE(dup(&ctl, 0xc1e00051, 0xc1e00051, &h, 0xc1e00051, 0x2000) == SD_NV_ERR_INVALID_OBJECT_PARENT);
	REQUIRE(dup(&ctl, 0xc1e00051, 0x2000, &h, 0xc1e00051, 0x2000) == SD_NV_ERR_INVALID_OBJECT_PARENT);
	/* On the control node only, of its own size only. */
	p = (struct sd_nvos55){ .hClient = 0xc1e00051, .hParent = 0x1000, .hClientSrc = 0xc1e00051, .hObjectSrc = 0x2000 };
	REQUIRE(ioc(&gpu, SD_ESC_RM_DUP_OBJECT, sizeof(p), &p) == SD_RC_INVAL);
	REQUIRE(ioc(&ctl, SD_ESC_RM_DUP_OBJECT, sizeof(p) - 4, &p) == SD_RC_INVAL);
	REQUIRE(xfer(&ctl, SD_ESC_RM_DUP_OBJECT, sizeof(p), &p) == SD_OK && p.status == SD_NV_OK);
	REQUIRE(node.used[1] == 4 * MiB);

	/* The original freed: the GPU still holds the pages, listed under a holder. */
	REQUIRE(rmfree(&ctl, 0xc1e00051, 0x2000) == SD_NV_OK && node.used[1] == 4 * MiB);
	sd_gpu_clients(&node, 1, list_one, &l);
	REQUIRE(l.n == 1 && l.pid[0] == 51 && l.bytes[0] == 4 * MiB);
	/* A duplicate's size is the memory's. */
	REQUIRE(kop_info(0xc1e00052, 0x3000, &si, 1, sizeof(struct sd_nv0041_get_surface_info)) == SD_NV_OK);
	REQUIRE(si.data == 4 * MiB / 4096);
	/* The first file's client freed whole, then the last name: the pages go back. */
	REQUIRE(rmfree(&ctl, 0xc1e00051, 0xc1e00051) == SD_NV_OK && node.used[1] == 4 * MiB);
	REQUIRE(rmfree(&ctl2, 0xc1e00052, 0x3000) == SD_NV_OK && node.used[1] == 0);

	/* A duplicate freed with its device, and a file released holding the last name. */
	h = 0x2000;
	REQUIRE(alloc(&ctl2, 0, 0xc1e00061, 0x1001, &h, SD_NV01_MEMORY_LOCAL_USER, &m, sizeof(m)) == SD_NV_OK);
	h = 0x2001;
	REQUIRE(dup(&ctl2, 0xc1e00061, 0x1001, &h, 0xc1e00061, 0x2000) == SD_NV_OK);
	REQUIRE(rmfree(&ctl2, 0xc1e00061, 0x2000) == SD_NV_OK && node.used[1] == 4 * MiB);
	REQUIRE(rmfree(&ctl2, 0xc1e00061, 0x1000) == SD_NV_OK && node.used[1] == 0);
	h = 0x2000;
	REQUIRE(alloc(&ctl2, 0, 0xc1e00052, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m, sizeof(m)) == SD_NV_OK);
	h = 0x2001;
	REQUIRE(dup(&ctl2, 0xc1e00052, 0x1000, &h, 0xc1e00052, 0x2000) == SD_NV_OK);
	sd_file_release(&ctl2);
	sd_file_release(&ctl);
	REQUIRE(node.used[1] == 0 && node.clients == NULL);
	caller_pid = 1000;
}

/*
 * NV_ESC_REGISTER_FD: a file registered to a control file acts as it in RM: its clients
 * are that file's, used through either, and freed with that file only.
 */
static void test_register_fd(void)
{
	struct sd_register_fd r = { .ctl_fd = 0 };
	struct sd_file a, b, g, c;
	sd_u32 h;

	sd_file_init(&a, &node, SD_CTL_MINOR);
	sd_file_init(&b, &node, SD_CTL_MINOR);
	sd_file_init(&c, &node, SD_CTL_MINOR);
	sd_file_init(&g, &node, 0);
	fd_files[0] = &a;
	fd_files[1] = &b;
	fd_files[2] = &g;
	/* Wrong size, a descriptor that is none or not a control file, itself. */
	REQUIRE(ioc(&b, SD_ESC_REGISTER_FD, sizeof(r) + 4, &r) == SD_RC_INVAL);
	r.ctl_fd = 5;
	REQUIRE(ioc(&b, SD_ESC_REGISTER_FD, sizeof(r), &r) == SD_RC_INVAL);
	r.ctl_fd = 2;
	REQUIRE(ioc(&b, SD_ESC_REGISTER_FD, sizeof(r), &r) == SD_RC_INVAL);
	r.ctl_fd = 1;
	REQUIRE(ioc(&b, SD_ESC_REGISTER_FD, sizeof(r), &r) == SD_RC_INVAL);
	REQUIRE(ctl_refs == 0);
	/* A GPU's file and another control file register to a; each once; a chain is refused. */
	r.ctl_fd = 0;
	REQUIRE(ioc(&g, SD_ESC_REGISTER_FD, sizeof(r), &r) == SD_OK && g.ctl == &a);
	REQUIRE(ioc(&b, SD_ESC_REGISTER_FD, sizeof(r), &r) == SD_OK && b.ctl == &a);
	REQUIRE(ioc(&b, SD_ESC_REGISTER_FD, sizeof(r), &r) == SD_RC_INVAL);
	r.ctl_fd = 1;
	REQUIRE(ioc(&c, SD_ESC_REGISTER_FD, sizeof(r), &r) == SD_RC_INVAL);
	REQUIRE(ctl_refs == 2);
	/* A client made through b is a's: usable through a, freed with a, not with b. */
	h = 0xc1e00071;
	REQUIRE(alloc(&b, 0, 0, 0, &h, SD_NV01_ROOT_CLIENT, NULL, 0) == SD_NV_OK);
	REQUIRE(node.clients && node.clients->file == &a);
	REQUIRE(rmfree(&c, 0xc1e00071, 0xc1e00071) == SD_NV_ERR_INVALID_CLIENT);
	h = 0xc1e00072;
	REQUIRE(alloc(&b, 0, 0, 0, &h, SD_NV01_ROOT_CLIENT, NULL, 0) == SD_NV_OK);
	REQUIRE(rmfree(&a, 0xc1e00072, 0xc1e00072) == SD_NV_OK);
	sd_file_release(&b);
	REQUIRE(node.clients != NULL && node.clients->handle == 0xc1e00071);
	sd_file_release(&g);
	sd_file_release(&c);
	sd_file_release(&a);
	REQUIRE(node.clients == NULL);
	ctl_refs -= 2;	/* the glue's part: the two kept references go with b and g */
	memset(fd_files, 0, sizeof(fd_files));
}

static sd_u32 dmabuf(struct sd_file *f, struct sd_export_dmabuf *p)
{
	REQUIRE(ioc(f, SD_ESC_EXPORT_TO_DMABUF_FD, sizeof(*p), p) == SD_OK);
	return p->status;
}

/*
 * NV_ESC_EXPORT_TO_DMABUF_FD: the objects' memory duplicated into a client of the
 * driver's own, which holds it, listed under no process once the handles are gone,
 * until the dma-buf is released. RM's checks in its order (nv_dma_buf_export,
 * nv_dma_buf_create, RmDmabufVerifyMemHandle).
 */
static void test_dmabuf(void)
{
	struct sd_memory_alloc m = vidmem(4 * MiB);
	struct sd_file ctl, gpu1, gpu0;
	struct sd_export_dmabuf p;
	const struct sd_client *drv;
	struct listed l = { 0 };
	sd_u32 h;

	sd_file_init(&ctl, &node, SD_CTL_MINOR);
	sd_file_init(&gpu1, &node, 1);
	sd_file_init(&gpu0, &node, 0);
	gpu_open_mask = 3;
	caller_pid = 81;
	setup(&ctl, 0xc1e00081, 1);
	h = 0x2000;
	REQUIRE(alloc(&ctl, 0, 0xc1e00081, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m, sizeof(m)) == SD_NV_OK);
	h = 0x2001;
	REQUIRE(alloc(&ctl, 0, 0xc1e00081, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m, sizeof(m)) == SD_NV_OK);
	REQUIRE(node.used[1] == 8 * MiB);

	p = (struct sd_export_dmabuf){ .fd = -1, .hClient = 0xc1e00081, .totalObjects = 2, .numObjects = 2,
		.totalSize = 6 * MiB, .handles = { 0x2000, 0x2001 }, .offsets = { 0, 2 * MiB },
		.sizes = { 4 * MiB, 2 * MiB } };
	/* A GPU's node only (NV_ACTUAL_DEVICE_ONLY), of its own size only. */
	REQUIRE(ioc(&ctl, SD_ESC_EXPORT_TO_DMABUF_FD, sizeof(p), &p) == SD_RC_INVAL);
	REQUIRE(ioc(&gpu1, SD_ESC_EXPORT_TO_DMABUF_FD, sizeof(p) - 8, &p) == SD_RC_INVAL);
	/* nv_dma_buf_export's checks, then nv_dma_buf_create's, then each object's. */
	p.totalSize = 0;
	REQUIRE(dmabuf(&gpu1, &p) == SD_NV_ERR_INVALID_ARGUMENT);
	p.totalSize = 6 * MiB;
	p.numObjects = 3;
	REQUIRE(dmabuf(&gpu1, &p) == SD_NV_ERR_INVALID_ARGUMENT);
	p.numObjects = 2;
	p.fd = 3;
	REQUIRE(dmabuf(&gpu1, &p) == SD_NV_ERR_NOT_SUPPORTED);
	p.fd = -2;
	REQUIRE(dmabuf(&gpu1, &p) == SD_NV_ERR_INVALID_ARGUMENT);
	p.fd = -1;
	p.index = 1;
	REQUIRE(dmabuf(&gpu1, &p) == SD_NV_ERR_INVALID_ARGUMENT);
	p.index = 0;
	p.hClient = 0xc1e00099;
	REQUIRE(dmabuf(&gpu1, &p) == SD_NV_ERR_INVALID_CLIENT);
	p.hClient = 0xc1e00081;
	p.handles[1] = 0x2999;
	REQUIRE(dmabuf(&gpu1, &p) == SD_NV_ERR_OBJECT_NOT_FOUND);
	p.handles[1] = 0x1000;
	REQUIRE(dmabuf(&gpu1, &p) == SD_NV_ERR_INVALID_OBJECT);
	p.handles[1] = 0x2001;
	REQUIRE(dmabuf(&gpu0, &p) == SD_NV_ERR_INVALID_OBJECT_PARENT);
	p.offsets[1] = 4096 + 1;
	REQUIRE(dmabuf(&gpu1, &p) == SD_NV_ERR_INVALID_ARGUMENT);
	p.offsets[1] = 4 * MiB - 4096;
	REQUIRE(dmabuf(&gpu1, &p) == SD_NV_ERR_INVALID_ARGUMENT);
	p.offsets[1] = 2 * MiB;
	p.sizes[1] = 4 * MiB;
	REQUIRE(dmabuf(&gpu1, &p) == SD_NV_ERR_INVALID_ARGUMENT);
	p.sizes[1] = 1 * MiB;
	REQUIRE(dmabuf(&gpu1, &p) == SD_NV_ERR_INVALID_ARGUMENT);
	p.sizes[1] = 2 * MiB;
	/* Every failure left nothing behind: the process's client alone. */
	REQUIRE(node.clients && !node.clients->next && bufs[0] == 0);

	REQUIRE(dmabuf(&gpu1, &p) == SD_NV_OK && p.fd == 0 && bufs[0]);
	REQUIRE(node.used[1] == 8 * MiB);
	for (drv = node.clients; drv && drv->file; drv = drv->next)
		;
	REQUIRE(drv && drv->pid == 0 && bufs[0] == drv->handle);
	REQUIRE(drv->handle >= SD_CLIENT_INTERNAL_HANDLE_BASE &&
		drv->handle < SD_CLIENT_INTERNAL_HANDLE_BASE + SD_CLIENT_HANDLE_RANGE);
	/* A second client of the process names 0x2001's memory too. */
	setup(&ctl, 0xc1e00083, 1);
	h = 0x3000;
	REQUIRE(dup(&ctl, 0xc1e00083, 0x1000, &h, 0xc1e00081, 0x2001) == SD_NV_OK);
	/*
	 * The first client's handles freed: the memory stays. What only the dma-buf names
	 * is in no process's figure (pid 0); what the process still names stays its own.
	 */
	REQUIRE(rmfree(&ctl, 0xc1e00081, 0x2000) == SD_NV_OK && node.used[1] == 8 * MiB);
	REQUIRE(rmfree(&ctl, 0xc1e00081, 0xc1e00081) == SD_NV_OK && node.used[1] == 8 * MiB);
	sd_gpu_clients(&node, 1, list_one, &l);
	REQUIRE(l.n == 2);
	REQUIRE((l.pid[0] == 81 && l.pid[1] == 0) || (l.pid[0] == 0 && l.pid[1] == 81));
	REQUIRE(l.bytes[0] == 4 * MiB && l.bytes[1] == 4 * MiB);
	/* A process cannot reach the driver's client: not its own, nor its process's. */
	REQUIRE(rmfree(&ctl, drv->handle, drv->handle) == SD_NV_ERR_INVALID_CLIENT);
	h = 0x3001;
	REQUIRE(dup(&ctl, 0xc1e00083, 0x1000, &h, drv->handle, drv->objs->handle) ==
		SD_NV_ERR_INSUFFICIENT_PERMISSIONS);
	sd_file_release(&ctl);
	REQUIRE(node.used[1] == 8 * MiB);
	/* The dma-buf released: the GPU gets it all back. */
	h_dmabuf_close(&node, 0);
	REQUIRE(node.used[1] == 0 && node.clients == NULL);
	sd_file_release(&gpu1);
	sd_file_release(&gpu0);
	caller_pid = 1000;
}

/*
 * The objects on gpu of nvidia-uvm's one session client (its device and subdevice
 * there, then duplicates under them).
 */
static int session_objs(sd_u32 gpu)
{
	const struct sd_client *c;
	const struct sd_obj *o;
	int n = 0;

	for (c = node.clients; c && c->handle != node.uvm_session; c = c->next)
		;
	for (o = c ? c->objs : 0; o; o = o->next)
		n += o->gpu == gpu;
	return n;
}

/* Clients of the driver's own (no file, no process): nvidia-uvm's session, dma-bufs'. */
static int own_clients(void)
{
	const struct sd_client *c;
	int n = 0;

	for (c = node.clients; c; c = c->next)
		n += !c->file && !c->pid;
	return n;
}

static void test_vaspace(void)
{
	struct sd_memory_alloc m4 = vidmem(4 * MiB), m2 = vidmem(2 * MiB);
	struct sd_va_env e = h_va_env(&node);
	struct sd_va_space s = { 0 };
	struct sd_uvm_map_head h = { .base = 0x200000000ULL, .length = 4 * MiB };
	struct sd_uvm_gpu_mapping a[2] = { 0 };
	struct sd_uvm_map_tail t = { .gpuAttributesCount = 1, .hClient = 0xc1e00091, .hMemory = 0x2000 };
	sd_u8 uuid[SD_UUID_LEN];
	struct sd_file ctl;
	struct listed l = { 0 };
	sd_u32 hm;

	/* The contract's UUIDs, "%012d" read as hex digits. */
	sd_gpu_uuid(12, uuid);
	REQUIRE(uuid[0] == 0xc6 && uuid[9] == 0x00 && uuid[14] == 0x00 && uuid[15] == 0x12);
	REQUIRE(sd_gpu_of_uuid(uuid, 4) == -1 && sd_gpu_of_uuid(uuid, 16) == 12);
	sd_file_init(&ctl, &node, SD_CTL_MINOR);
	gpu_open_mask = 3;
	caller_pid = 91;
	setup(&ctl, 0xc1e00091, 1);
	hm = 0x2000;
	REQUIRE(alloc(&ctl, 0, 0xc1e00091, 0x1000, &hm, SD_NV01_MEMORY_LOCAL_USER, &m4, sizeof(m4)) == SD_NV_OK);
	hm = 0x2001;
	REQUIRE(alloc(&ctl, 0, 0xc1e00091, 0x1001, &hm, SD_NV01_MEMORY_LOCAL_USER, &m2, sizeof(m2)) == SD_NV_OK);
	REQUIRE(node.used[1] == 6 * MiB);

	sd_gpu_uuid(1, a[0].gpuUuid);
	sd_gpu_uuid(0, a[1].gpuUuid);
	sd_gpu_uuid(7, uuid);
	REQUIRE(sd_va_register_gpu(&s, &e, uuid) == SD_NV_ERR_GPU_UUID_NOT_FOUND);
	REQUIRE(sd_va_register_gpu(&s, &e, a[0].gpuUuid) == SD_NV_OK);
	REQUIRE(sd_va_register_gpu(&s, &e, a[0].gpuUuid) == SD_NV_ERR_INVALID_DEVICE);
	REQUIRE(sd_va_register_gpu(&s, &e, a[1].gpuUuid) == SD_NV_OK);
	REQUIRE(sd_va_create_range(&s, 0, 8 * MiB) == SD_NV_ERR_INVALID_ADDRESS);
	REQUIRE(sd_va_create_range(&s, h.base + 1, 8 * MiB) == SD_NV_ERR_INVALID_ADDRESS);
	REQUIRE(sd_va_create_range(&s, h.base, 0) == SD_NV_ERR_INVALID_ADDRESS);
	REQUIRE(sd_va_create_range(&s, ~0ULL & ~0xfffULL, 8 * MiB) == SD_NV_ERR_INVALID_ADDRESS);
	REQUIRE(sd_va_create_range(&s, h.base, 8 * MiB) == SD_NV_OK);
	REQUIRE(sd_va_create_range(&s, h.base + 4 * MiB, 8 * MiB) == SD_NV_ERR_UVM_ADDRESS_IN_USE);

	/* Each check in uvm_map_external_allocation's order; none leaves a duplicate. */
	t.gpuAttributesCount = 0;
	REQUIRE(sd_va_map(&s, &e, &h, a, 32, &t) == SD_NV_ERR_INVALID_ARGUMENT);
	t.gpuAttributesCount = 33;
	REQUIRE(sd_va_map(&s, &e, &h, a, 32, &t) == SD_NV_ERR_INVALID_ARGUMENT);
	t.gpuAttributesCount = 1;
	h.base += 8 * MiB;
	REQUIRE(sd_va_map(&s, &e, &h, a, 32, &t) == SD_NV_ERR_INVALID_ADDRESS);
	h.base -= 2 * MiB;
	REQUIRE(sd_va_map(&s, &e, &h, a, 32, &t) == SD_NV_ERR_INVALID_ADDRESS);	/* past the range */
	h.base -= 6 * MiB;
	a[0].gpuFormatType = 1;
	REQUIRE(sd_va_map(&s, &e, &h, a, 32, &t) == SD_NV_ERR_INVALID_ARGUMENT);
	a[0].gpuFormatType = 0;
	sd_gpu_uuid(2, uuid);
	memcpy(a[0].gpuUuid, uuid, SD_UUID_LEN);
	REQUIRE(sd_va_map(&s, &e, &h, a, 32, &t) == SD_NV_ERR_INVALID_DEVICE);
	sd_gpu_uuid(1, a[0].gpuUuid);
	t.hClient = 0xc1e00099;
	REQUIRE(sd_va_map(&s, &e, &h, a, 32, &t) == SD_NV_ERR_INVALID_CLIENT);
	t.hClient = 0xc1e00091;
	t.hMemory = 0x2999;
	REQUIRE(sd_va_map(&s, &e, &h, a, 32, &t) == SD_NV_ERR_OBJECT_NOT_FOUND);
	t.hMemory = 0x1000;
	REQUIRE(sd_va_map(&s, &e, &h, a, 32, &t) == SD_NV_ERR_INVALID_OBJECT_HANDLE);
	t.hMemory = 0x2000;
	caller_pid = 92;	/* another process: RM's default share rule */
	REQUIRE(sd_va_map(&s, &e, &h, a, 32, &t) == SD_NV_ERR_INSUFFICIENT_PERMISSIONS);
	caller_pid = 91;
	h.offset = 2 * MiB;
	REQUIRE(sd_va_map(&s, &e, &h, a, 32, &t) == SD_NV_ERR_INVALID_OFFSET);
	h.offset = 0;
	/* GPU 1's memory mapped on GPU 0 too: a peer mapping, not served; GPU 1's undone. */
	t.gpuAttributesCount = 2;
	REQUIRE(sd_va_map(&s, &e, &h, a, 32, &t) == SD_NV_ERR_INVALID_DEVICE);
	REQUIRE(session_objs(1) == 2 && session_objs(0) == 2 && s.ranges->maps == NULL);
	REQUIRE(own_clients() == 1);	/* one session for both GPUs, as NVIDIA's */

	/* Mapped: the duplicate holds the memory past the handle it came from. */
	t.gpuAttributesCount = 1;
	REQUIRE(sd_va_map(&s, &e, &h, a, 32, &t) == SD_NV_OK && session_objs(1) == 3);
	/* Its page tables, at 2 MiB pages: a directory of each level, the GPU's alone. */
	REQUIRE(node.uvm_tables[1] == 3 * 4096);
	REQUIRE(rmfree(&ctl, 0xc1e00091, 0x2000) == SD_NV_OK && node.used[1] == 6 * MiB + 3 * 4096);
	sd_gpu_clients(&node, 1, list_one, &l);
	REQUIRE(l.n == 2 && l.bytes[0] + l.bytes[1] == 6 * MiB && (l.pid[0] == 0 || l.pid[1] == 0));
	/* 2 MiB mapped over its middle: the first mapping's two ends keep its duplicate. */
	h.base += 1 * MiB;
	h.length = 2 * MiB;
	t.hMemory = 0x2001;
	REQUIRE(sd_va_map(&s, &e, &h, a, 32, &t) == SD_NV_OK && session_objs(1) == 4);
	REQUIRE(s.ranges->maps && s.ranges->maps->next && s.ranges->maps->next->next);
	/* At 64 KiB pages (1 MiB aligned): two tables of 256 bytes more, in the same directories. */
	REQUIRE(node.uvm_tables[1] == 3 * 4096 + 2 * 256);
	REQUIRE(rmfree(&ctl, 0xc1e00091, 0x2001) == SD_NV_OK && node.used[1] == 6 * MiB + 3 * 4096 + 2 * 256);
	/* A partial free is an error; the range's free gives it all back. */
	REQUIRE(sd_va_free(&s, &e, h.base, 2 * MiB) == SD_NV_ERR_INVALID_ADDRESS);
	REQUIRE(sd_va_free(&s, &e, 0x200000000ULL, 8 * MiB) == SD_NV_OK);
	REQUIRE(node.used[1] == 0 && node.uvm_tables[1] == 0);
	REQUIRE(session_objs(1) == 2 && s.ranges == NULL);

	/* Unregistering the GPU, and the va_space's end, unmap too. */
	hm = 0x2002;
	REQUIRE(alloc(&ctl, 0, 0xc1e00091, 0x1000, &hm, SD_NV01_MEMORY_LOCAL_USER, &m2, sizeof(m2)) == SD_NV_OK);
	h = (struct sd_uvm_map_head){ .base = 0x200000000ULL, .length = 2 * MiB };
	t.hMemory = 0x2002;
	REQUIRE(sd_va_create_range(&s, h.base, 2 * MiB) == SD_NV_OK);
	REQUIRE(sd_va_map(&s, &e, &h, a, 32, &t) == SD_NV_OK && session_objs(1) == 3);
	REQUIRE(sd_va_unregister_gpu(&s, &e, a[0].gpuUuid) == SD_NV_OK && session_objs(1) == 2);
	REQUIRE(sd_va_unregister_gpu(&s, &e, a[0].gpuUuid) == SD_NV_ERR_INVALID_DEVICE);
	REQUIRE(sd_va_map(&s, &e, &h, a, 32, &t) == SD_NV_ERR_INVALID_DEVICE);
	REQUIRE(sd_va_register_gpu(&s, &e, a[0].gpuUuid) == SD_NV_OK);
	REQUIRE(sd_va_map(&s, &e, &h, a, 32, &t) == SD_NV_OK);
	sd_file_release(&ctl);
	REQUIRE(node.used[1] == 2 * MiB + 3 * 4096);
	sd_va_destroy(&s, &e);
	REQUIRE(node.used[1] == 0 && node.uvm_tables[1] == 0 && session_objs(1) == 2);
	sd_uvm_sessions_free(&node);
	REQUIRE(node.clients == NULL);
	caller_pid = 1000;
}

/*
 * nvidia-uvm's page tables: a mapping at 4 KiB pages (its base 4 KiB past a 2 MiB
 * boundary) takes a table per 2 MiB it touches and a directory of each level; a second
 * 1 GiB away shares the two upper directories; a map the GPU has no room for is
 * NV_ERR_NO_MEMORY with no table and no duplicate left. System memory's and sparse
 * mappings' tables too.
 */
static void test_uvm_tables(void)
{
	struct sd_memory_alloc m64 = vidmem(64 * MiB);
	struct sd_va_env e = h_va_env(&node);
	struct sd_va_space s = { 0 };
	struct sd_uvm_map_head h = { .base = 0x200001000ULL, .length = 64 * MiB };
	struct sd_uvm_gpu_mapping a[1] = { 0 };
	struct sd_uvm_map_tail t = { .gpuAttributesCount = 1, .hClient = 0xc1e00091, .hMemory = 0x2000 };
	struct sd_memory_alloc sys = { .owner = 0xcafe, .size = MiB,
		.attr = SD_ATTR_LOCATION_PCI << SD_ATTR_LOCATION_SHIFT };
	struct sd_uvm_map_external_sparse sp = { .base = 0x200000000ULL };
	struct sd_file ctl;
	sd_u8 owner[SD_UUID_LEN];
	sd_u64 total = node.total[1];
	sd_u32 hm = 0x2000;

	sd_file_init(&ctl, &node, SD_CTL_MINOR);
	gpu_open_mask = 3;
	caller_pid = 91;
	setup(&ctl, 0xc1e00091, 1);
	REQUIRE(alloc(&ctl, 0, 0xc1e00091, 0x1000, &hm, SD_NV01_MEMORY_LOCAL_USER, &m64, sizeof(m64)) == SD_NV_OK);
	sd_gpu_uuid(1, a[0].gpuUuid);
	REQUIRE(sd_va_register_gpu(&s, &e, a[0].gpuUuid) == SD_NV_OK);
	REQUIRE(sd_va_create_range(&s, 0x200000000ULL, 2ULL << 30) == SD_NV_OK);
	/* Room for 35 of the 36 tables: none made, the duplicate gone. */
	node.total[1] = node.used[1] + 35 * 4096;
	REQUIRE(sd_va_map(&s, &e, &h, a, 1, &t) == SD_NV_ERR_NO_MEMORY);
	REQUIRE(node.uvm_tables[1] == 0 && session_objs(1) == 2);
	node.total[1] = total;
	REQUIRE(sd_va_map(&s, &e, &h, a, 1, &t) == SD_NV_OK && node.uvm_tables[1] == 36 * 4096);
	h.base += 1ULL << 30;
	REQUIRE(sd_va_map(&s, &e, &h, a, 1, &t) == SD_NV_OK && node.uvm_tables[1] == (36 + 34) * 4096);
	REQUIRE(node.used[1] == 64 * MiB + (36 + 34) * 4096);
	REQUIRE(sd_va_free(&s, &e, 0x200000000ULL, 2ULL << 30) == SD_NV_OK);
	REQUIRE(node.uvm_tables[1] == 0 && node.used[1] == 64 * MiB);
	sd_va_destroy(&s, &e);
	/*
	 * System memory of GPU 1's device, mapped on GPU 0: refused until its owner is
	 * registered too (set_ext_gpu_map_location), then at 4 KiB pages (a directory of
	 * each level and a table), the tables GPU 0's.
	 */
	hm = 0x2001;
	REQUIRE(alloc(&ctl, 0, 0xc1e00091, 0x1000, &hm, SD_NV01_MEMORY_SYSTEM, &sys, sizeof(sys)) == SD_NV_OK);
	t.hMemory = 0x2001;
	h.length = MiB;
	sd_gpu_uuid(0, a[0].gpuUuid);
	REQUIRE(sd_va_register_gpu(&s, &e, a[0].gpuUuid) == SD_NV_OK);
	REQUIRE(sd_va_create_range(&s, 0x200000000ULL, 2ULL << 30) == SD_NV_OK);
	REQUIRE(sd_va_map(&s, &e, &h, a, 1, &t) == SD_NV_ERR_INVALID_DEVICE && session_objs(0) == 2);
	sd_gpu_uuid(1, owner);
	REQUIRE(sd_va_register_gpu(&s, &e, owner) == SD_NV_OK);
	REQUIRE(sd_va_map(&s, &e, &h, a, 1, &t) == SD_NV_OK);
	REQUIRE(node.uvm_tables[0] == 4 * 4096 && node.used[0] == 4 * 4096 && node.used[1] == 64 * MiB);
	sd_va_destroy(&s, &e);
	REQUIRE(node.uvm_tables[0] == 0 && node.used[0] == 0);
	/*
	 * A sparse mapping of 1 GiB on GPU 1: tables of 64 KiB pages over all of it (512
	 * of 256 bytes) and a directory of each level, two of the last; the 64 MiB mapped
	 * over its start at 2 MiB pages unmaps that part (32 tables less); the range's
	 * free takes the rest.
	 */
	REQUIRE(sd_va_register_gpu(&s, &e, owner) == SD_NV_OK);
	REQUIRE(sd_va_create_range(&s, 0x200000000ULL, 2ULL << 30) == SD_NV_OK);
	memcpy(sp.gpuUuid, owner, SD_UUID_LEN);
	sp.length = 4096;
	REQUIRE(sd_va_map_sparse(&s, &e, &sp) == SD_NV_ERR_INVALID_ADDRESS);
	sp.length = 4ULL << 30;
	REQUIRE(sd_va_map_sparse(&s, &e, &sp) == SD_NV_ERR_INVALID_ADDRESS);
	sp.length = 1ULL << 30;
	REQUIRE(sd_va_map_sparse(&s, &e, &sp) == SD_NV_OK);
	REQUIRE(node.uvm_tables[1] == 512 * 256 + 4 * 4096 && session_objs(1) == 2);
	h = (struct sd_uvm_map_head){ .base = 0x200000000ULL, .length = 64 * MiB };
	t.hMemory = 0x2000;
	memcpy(a[0].gpuUuid, owner, SD_UUID_LEN);
	REQUIRE(sd_va_map(&s, &e, &h, a, 1, &t) == SD_NV_OK);
	REQUIRE(node.uvm_tables[1] == (512 - 32) * 256 + 4 * 4096);
	REQUIRE(sd_va_free(&s, &e, 0x200000000ULL, 2ULL << 30) == SD_NV_OK);
	REQUIRE(node.uvm_tables[1] == 0 && node.used[1] == 64 * MiB);
	sd_va_destroy(&s, &e);
	sd_file_release(&ctl);
	REQUIRE(node.used[1] == 0);
	sd_uvm_sessions_free(&node);
	REQUIRE(node.clients == NULL);
	caller_pid = 1000;
}

/*
 * Ranges that map no RM memory: a dynamic parallelism region (one GPU page, on a GPU
 * with a GPU VA space, its tables at that page size) and a semaphore pool (its tables at
 * 4 KiB pages in every GPU VA space, then and as one is registered), each apart from
 * every other range, neither taking a sparse mapping, both gone with their tables by
 * UVM_FREE; unregistering the GPU VA space takes their tables, and a GPU VA space with
 * no room for a pool's tables is not registered.
 */
static void test_uvm_pools(void)
{
	struct sd_vaspace_alloc va = { .index = 0 };
	struct sd_uvm_register_gpu_vaspace rv = { .hClient = 0xc1e00020, .hVaSpace = 0x3060 };
	struct sd_uvm_unregister_gpu_vaspace uv = { 0 };
	struct sd_uvm_map_dp_region dp = { .base = 0x400000000ULL, .length = 64 * 1024 };
	struct sd_uvm_pool_head ph = { .base = 0x500000000ULL, .length = 3 * MiB };
	struct sd_uvm_pool_tail pt = { .gpuAttributesCount = 33 };
	struct sd_uvm_gpu_mapping a[32] = { 0 };
	struct sd_uvm_map_external_sparse sp = { .base = 0x500000000ULL, .length = 64 * 1024 };
	struct sd_va_env e = h_va_env(&node);
	struct sd_va_space s = { 0 };
	struct sd_file ctl;
	sd_u64 total = node.total[2];
	sd_u32 h = 0x3060;

	sd_file_init(&ctl, &node, SD_CTL_MINOR);
	gpu_open_mask = 1u << 2;
	caller_pid = 91;
	setup(&ctl, 0xc1e00020, 2);
	REQUIRE(alloc(&ctl, 0, 0xc1e00020, 0x1000, &h, SD_FERMI_VASPACE_A, &va, sizeof(va)) == SD_NV_OK);
	sd_gpu_uuid(2, dp.gpuUuid);
	sd_gpu_uuid(2, rv.gpuUuid);
	sd_gpu_uuid(2, uv.gpuUuid);
	sd_gpu_uuid(2, sp.gpuUuid);
	REQUIRE(sd_va_register_gpu(&s, &e, rv.gpuUuid) == SD_NV_OK);
	REQUIRE(sd_va_map_dp_region(&s, &e, &dp) == SD_NV_ERR_INVALID_DEVICE);
	/* The pool's attributes: at most the release's count, of registered GPUs. */
	REQUIRE(sd_va_alloc_pool(&s, &e, &ph, a, 32, &pt) == SD_NV_ERR_INVALID_ARGUMENT);
	pt.gpuAttributesCount = 1;
	sd_gpu_uuid(3, a[0].gpuUuid);
	REQUIRE(sd_va_alloc_pool(&s, &e, &ph, a, 32, &pt) == SD_NV_ERR_INVALID_DEVICE);
	sd_gpu_uuid(2, a[0].gpuUuid);
	/* Made before the GPU VA space: mapped as it comes, 3 MiB from a 2 MiB boundary at
	 * 4 KiB pages: two tables and a directory of each level. */
	REQUIRE(sd_va_alloc_pool(&s, &e, &ph, a, 32, &pt) == SD_NV_OK && node.uvm_tables[2] == 0);
	REQUIRE(sd_va_alloc_pool(&s, &e, &ph, a, 32, &pt) == SD_NV_ERR_UVM_ADDRESS_IN_USE);
	REQUIRE(sd_va_register_gpu_vaspace(&s, &e, &rv) == SD_NV_OK);
	REQUIRE(node.uvm_tables[2] == 5 * 4096);
	/* Neither a sparse mapping nor an external range goes into it. */
	REQUIRE(sd_va_map_sparse(&s, &e, &sp) == SD_NV_ERR_INVALID_ADDRESS);
	REQUIRE(sd_va_create_range(&s, sp.base, sp.length) == SD_NV_ERR_UVM_ADDRESS_IN_USE);

	/* A region is one page the GPU takes, aligned to it. */
	dp.length = 8192;
	REQUIRE(sd_va_map_dp_region(&s, &e, &dp) == SD_NV_ERR_INVALID_ADDRESS);
	dp.length = 64 * 1024;
	dp.base += 4096;
	REQUIRE(sd_va_map_dp_region(&s, &e, &dp) == SD_NV_ERR_INVALID_ADDRESS);
	dp.base = ph.base;
	REQUIRE(sd_va_map_dp_region(&s, &e, &dp) == SD_NV_ERR_UVM_ADDRESS_IN_USE);
	/* No room for its tables: no range left behind. */
	dp.base = 0x400000000ULL;
	node.total[2] = node.used[2] + 4096;
	REQUIRE(sd_va_map_dp_region(&s, &e, &dp) == SD_NV_ERR_NO_MEMORY && node.uvm_tables[2] == 5 * 4096);
	node.total[2] = total;
	/* A directory of its own (the upper two shared) and a table of 64 KiB pages. */
	REQUIRE(sd_va_map_dp_region(&s, &e, &dp) == SD_NV_OK && node.uvm_tables[2] == 6 * 4096 + 256);
	/* A second pool with no room for its tables: nothing left. */
	ph.base = 0x600000000ULL;
	node.total[2] = node.used[2] + 4096;
	REQUIRE(sd_va_alloc_pool(&s, &e, &ph, a, 32, &pt) == SD_NV_ERR_NO_MEMORY);
	node.total[2] = total;
	REQUIRE(node.uvm_tables[2] == 6 * 4096 + 256);

	/* The GPU VA space goes: their tables with it, the ranges stay. */
	REQUIRE(sd_va_unregister_gpu_vaspace(&s, &e, &uv) == SD_NV_OK && node.uvm_tables[2] == 0);
	/* Registered again with no room for the pool's tables: refused, nothing kept. */
	node.total[2] = node.used[2] + 4096;
	REQUIRE(sd_va_register_gpu_vaspace(&s, &e, &rv) == SD_NV_ERR_NO_MEMORY);
	REQUIRE(node.uvm_tables[2] == 0 && s.gpu_va_space[2] == NULL);
	node.total[2] = total;
	REQUIRE(sd_va_register_gpu_vaspace(&s, &e, &rv) == SD_NV_OK && node.uvm_tables[2] == 5 * 4096);
	/* UVM_FREE takes either whole. */
	REQUIRE(sd_va_free(&s, &e, 0x500000000ULL, 3 * MiB) == SD_NV_OK && node.uvm_tables[2] == 0);
	REQUIRE(sd_va_free(&s, &e, dp.base, dp.length) == SD_NV_OK && s.ranges == NULL);
	/* The va_space's end takes what is left. */
	REQUIRE(sd_va_map_dp_region(&s, &e, &dp) == SD_NV_OK && node.uvm_tables[2] == 3 * 4096 + 256);
	sd_va_destroy(&s, &e);
	REQUIRE(node.uvm_tables[2] == 0 && s.ranges == NULL);
	sd_file_release(&ctl);
	REQUIRE(node.used[2] == 0 && session_objs(2) == 2);
	caller_pid = 1000;
}

/*
 * Managed memory: a managed range (the mmap's) apart from external ranges; moved to a
 * registered GPU (its bytes in the GPU's used figure, none in any process's), partly
 * back to the CPU, over what it held; a part unmapped, the GPU unregistered and the
 * va_space's end give it back. Pageable memory moves only with HMM on.
 */
static void test_uvm_managed(void)
{
	struct sd_va_env e = h_va_env(&node);
	struct sd_va_space s = { 0 };
	struct sd_uvm_migrate m = { .base = 0x300000000ULL, .length = 64 * MiB };
	const sd_u64 va = 0x300000000ULL;
	sd_u64 total = node.total[1];
	sd_u8 gpu1[SD_UUID_LEN];

	sd_gpu_uuid(1, gpu1);
	REQUIRE(sd_va_create_managed(&s, &e, va, 4096 + 1) == SD_NV_ERR_INVALID_ADDRESS);
	REQUIRE(sd_va_create_managed(&s, &e, va, 128 * MiB) == SD_NV_OK);
	REQUIRE(sd_va_create_managed(&s, &e, va + 64 * MiB, 128 * MiB) == SD_NV_ERR_UVM_ADDRESS_IN_USE);
	REQUIRE(sd_va_create_range(&s, va + 127 * MiB, 2 * MiB) == SD_NV_ERR_UVM_ADDRESS_IN_USE);
	REQUIRE(sd_va_create_range(&s, va + 128 * MiB, 2 * MiB) == SD_NV_OK);
	REQUIRE(sd_va_create_managed(&s, &e, va + 129 * MiB, 2 * MiB) == SD_NV_ERR_UVM_ADDRESS_IN_USE);
	/* Not registered, then a flag the stand-in does not serve, then past the range. */
	memcpy(m.destinationUuid, gpu1, SD_UUID_LEN);
	REQUIRE(sd_va_migrate(&s, &e, &m) == SD_NV_ERR_INVALID_DEVICE);
	REQUIRE(sd_va_register_gpu(&s, &e, gpu1) == SD_NV_OK);
	m.flags = 1;
	REQUIRE(sd_va_migrate(&s, &e, &m) == SD_NV_ERR_INVALID_ARGUMENT);
	m.flags = 0;
	s.flags = SD_UVM_INIT_FLAGS_DISABLE_HMM;
	m.length = 129 * MiB;
	REQUIRE(sd_va_migrate(&s, &e, &m) == SD_NV_ERR_INVALID_ADDRESS && node.used[1] == 0);
	/* 64 MiB moved, then all 128 (the first 64 again once), then no room: on the CPU. */
	m.length = 64 * MiB;
	REQUIRE(sd_va_migrate(&s, &e, &m) == SD_NV_OK && node.used[1] == 64 * MiB);
	m.length = 128 * MiB;
	REQUIRE(sd_va_migrate(&s, &e, &m) == SD_NV_OK && node.used[1] == 128 * MiB);
	REQUIRE(node.uvm_pages[1] == 128 * MiB && node.uvm_tables[1] == 0);
	node.total[1] = 100 * MiB;
	REQUIRE(sd_va_migrate(&s, &e, &m) == SD_NV_ERR_NO_MEMORY && node.used[1] == 0);
	node.total[1] = total;
	REQUIRE(sd_va_migrate(&s, &e, &m) == SD_NV_OK && node.used[1] == 128 * MiB);
	/* 16 MiB inside back to the CPU (a split), then 32 unmapped across its edge. */
	memset(m.destinationUuid, 0, SD_UUID_LEN);
	m.base = va + 32 * MiB;
	m.length = 16 * MiB;
	REQUIRE(sd_va_migrate(&s, &e, &m) == SD_NV_OK && node.used[1] == 112 * MiB);
	sd_va_unmap_managed(&s, &e, va + 40 * MiB, 32 * MiB);
	REQUIRE(node.used[1] == (112 - 24) * MiB);
	/* The unmapped part is no longer managed: moving it is refused without HMM. */
	memcpy(m.destinationUuid, gpu1, SD_UUID_LEN);
	m.base = va + 48 * MiB;
	REQUIRE(sd_va_migrate(&s, &e, &m) == SD_NV_ERR_INVALID_ADDRESS);
	/* With HMM on, it is pageable memory and moves; an external range never does. */
	s.flags = 0;
	REQUIRE(sd_va_migrate(&s, &e, &m) == SD_NV_OK && node.used[1] == (112 - 8) * MiB);
	m.base = va + 128 * MiB;
	m.length = 2 * MiB;
	REQUIRE(sd_va_migrate(&s, &e, &m) == SD_NV_ERR_INVALID_ADDRESS);
	REQUIRE(sd_va_unregister_gpu(&s, &e, gpu1) == SD_NV_OK && node.used[1] == 0);
	REQUIRE(sd_va_register_gpu(&s, &e, gpu1) == SD_NV_OK);
	m.base = va;
	m.length = 32 * MiB;
	REQUIRE(sd_va_migrate(&s, &e, &m) == SD_NV_OK && node.used[1] == 32 * MiB);
	sd_va_destroy(&s, &e);
	REQUIRE(node.used[1] == 0 && node.uvm_pages[1] == 0 && s.managed == NULL && s.resident == NULL);
}

/*
 * Channels registered with nvidia-uvm: retained (a duplicate of the group and a
 * retainer in nvidia-uvm's client), so their memory stays past the process's free and
 * its file, until unregistered or the va_space ends; each refusal in RM's order.
 */
static void test_uvm_channels(void)
{
	struct sd_channel_group_alloc g = { .engineType = 1 };
	struct sd_channel_alloc_head ch = { 0 };
	struct sd_va_env e = h_va_env(&node);
	struct sd_va_space s = { 0 }, s2 = { 0 };
	struct sd_uvm_register_channel r = { .hClient = 0xc1e00020, .hChannel = 0x3001 };
	struct sd_uvm_unregister_channel u = { .hClient = 0xc1e00020, .hChannel = 0x3001 };
	struct sd_file ctl;
	sd_u8 three[SD_UUID_LEN];
	sd_u32 h;

	sd_file_init(&ctl, &node, SD_CTL_MINOR);
	gpu_open_mask = 1u << 2;
	caller_pid = 91;
	setup(&ctl, 0xc1e00020, 2);
	h = 0x3000;
	REQUIRE(alloc(&ctl, 0, 0xc1e00020, 0x1000, &h, SD_KEPLER_CHANNEL_GROUP_A, &g, sizeof(g)) == SD_NV_OK);
	h = 0x3001;
	REQUIRE(alloc(&ctl, 0, 0xc1e00020, 0x3000, &h, SD_TURING_CHANNEL_GPFIFO_A, &ch, sizeof(ch)) == SD_NV_OK);
	h = 0x3002;
	REQUIRE(alloc(&ctl, 0, 0xc1e00020, 0x1000, &h, SD_TURING_CHANNEL_GPFIFO_A, &ch, sizeof(ch)) == SD_NV_OK);
	REQUIRE(node.used[2] == SD_GROUP_HELD + 2 * SD_CHANNEL_HELD);

	sd_gpu_uuid(2, r.gpuUuid);
	sd_gpu_uuid(2, u.gpuUuid);
	sd_gpu_uuid(3, three);
	REQUIRE(sd_va_register_channel(&s, &e, &r) == SD_NV_ERR_INVALID_DEVICE);
	REQUIRE(sd_va_register_gpu(&s, &e, r.gpuUuid) == SD_NV_OK);
	REQUIRE(sd_va_register_gpu(&s, &e, three) == SD_NV_OK);
	r.hClient = 0xc1e00099;
	REQUIRE(sd_va_register_channel(&s, &e, &r) == SD_NV_ERR_INVALID_CLIENT);
	r.hClient = 0xc1e00020;
	r.hChannel = 0x3000;	/* a group is not a channel */
	REQUIRE(sd_va_register_channel(&s, &e, &r) == SD_NV_ERR_INVALID_OBJECT_HANDLE);
	r.hChannel = 0x3001;
	memcpy(r.gpuUuid, three, SD_UUID_LEN);
	REQUIRE(sd_va_register_channel(&s, &e, &r) == SD_NV_ERR_OTHER_DEVICE_FOUND);
	sd_gpu_uuid(2, r.gpuUuid);
	REQUIRE(sd_va_register_channel(&s, &e, &r) == SD_NV_OK);
	REQUIRE(session_objs(2) == 4);		/* device, subdevice, the group's duplicate, the retainer */
	REQUIRE(sd_va_register_channel(&s, &e, &r) == SD_NV_ERR_INVALID_CHANNEL && session_objs(2) == 4);
	/* Another process's group cannot be duplicated. */
	REQUIRE(sd_va_register_gpu(&s2, &e, r.gpuUuid) == SD_NV_OK);
	caller_pid = 92;
	REQUIRE(sd_va_register_channel(&s2, &e, &r) == SD_NV_ERR_INSUFFICIENT_PERMISSIONS);
	caller_pid = 91;
	r.hChannel = 0x3002;
	REQUIRE(sd_va_register_channel(&s, &e, &r) == SD_NV_OK && session_objs(2) == 5);
	REQUIRE(node.used[2] == SD_GROUP_HELD + 2 * SD_CHANNEL_HELD);

	/* The process frees its group (its channel with it): both stay retained. */
	REQUIRE(rmfree(&ctl, 0xc1e00020, 0x3000) == SD_NV_OK);
	REQUIRE(node.used[2] == SD_GROUP_HELD + 2 * SD_CHANNEL_HELD);
	/* By the handles alone, as nvidia-uvm: the UUID is not looked at. */
	memcpy(u.gpuUuid, three, SD_UUID_LEN);
	REQUIRE(sd_va_unregister_channel(&s, &e, &u) == SD_NV_OK);
	REQUIRE(node.used[2] == SD_CHANNEL_HELD && session_objs(2) == 3);
	REQUIRE(sd_va_unregister_channel(&s, &e, &u) == SD_NV_ERR_INVALID_CHANNEL);
	/* The file's end leaves the retained channel; the va_space's end takes it. */
	sd_file_release(&ctl);
	REQUIRE(node.used[2] == SD_CHANNEL_HELD);
	sd_va_destroy(&s, &e);
	sd_va_destroy(&s2, &e);
	REQUIRE(node.used[2] == 0 && session_objs(2) == 2 && s.channels == NULL);
	/*
	 * A GPU VA space registered: duplicated, so its page directory stays past the
	 * process's free until it is unregistered; each refusal in RM's order.
	 */
	sd_file_init(&ctl, &node, SD_CTL_MINOR);
	setup(&ctl, 0xc1e00020, 2);
	{
		struct sd_vaspace_alloc va = { .index = 0 };
		struct sd_uvm_register_gpu_vaspace rv = { .hClient = 0xc1e00020, .hVaSpace = 0x3060 };
		struct sd_uvm_unregister_gpu_vaspace uv = { 0 };

		h = 0x3060;
		REQUIRE(alloc(&ctl, 0, 0xc1e00020, 0x1000, &h, SD_FERMI_VASPACE_A, &va, sizeof(va)) == SD_NV_OK);
		h = 0x3061;
		REQUIRE(alloc(&ctl, 0, 0xc1e00020, 0x1001, &h, SD_FERMI_VASPACE_A, &va, sizeof(va)) == SD_NV_OK);
		REQUIRE(node.used[2] == 2 * SD_VASPACE_HELD);
		sd_gpu_uuid(2, rv.gpuUuid);
		sd_gpu_uuid(2, uv.gpuUuid);
		REQUIRE(sd_va_register_gpu_vaspace(&s, &e, &rv) == SD_NV_ERR_INVALID_DEVICE);
		REQUIRE(sd_va_register_gpu(&s, &e, rv.gpuUuid) == SD_NV_OK);
		REQUIRE(sd_va_register_gpu(&s2, &e, rv.gpuUuid) == SD_NV_OK);
		rv.hVaSpace = 0x3999;
		REQUIRE(sd_va_register_gpu_vaspace(&s, &e, &rv) == SD_NV_ERR_OBJECT_NOT_FOUND);
		rv.hVaSpace = 0x1001;	/* a subdevice */
		REQUIRE(sd_va_register_gpu_vaspace(&s, &e, &rv) == SD_NV_ERR_INVALID_OBJECT);
		rv.hVaSpace = 0x3061;	/* under a subdevice */
		REQUIRE(sd_va_register_gpu_vaspace(&s, &e, &rv) == SD_NV_ERR_INVALID_OBJECT);
		rv.hVaSpace = 0x3060;
		caller_pid = 92;
		REQUIRE(sd_va_register_gpu_vaspace(&s2, &e, &rv) == SD_NV_ERR_INSUFFICIENT_PERMISSIONS);
		caller_pid = 91;
		REQUIRE(sd_va_register_gpu_vaspace(&s, &e, &rv) == SD_NV_OK && session_objs(2) == 3);
		REQUIRE(sd_va_register_gpu_vaspace(&s, &e, &rv) == SD_NV_ERR_INVALID_DEVICE);
		REQUIRE(sd_va_register_gpu_vaspace(&s2, &e, &rv) == SD_NV_OK && session_objs(2) == 4);
		REQUIRE(rmfree(&ctl, 0xc1e00020, 0x3060) == SD_NV_OK && rmfree(&ctl, 0xc1e00020, 0x3061) == SD_NV_OK);
		REQUIRE(node.used[2] == SD_VASPACE_HELD);
		REQUIRE(sd_va_unregister_gpu_vaspace(&s, &e, &uv) == SD_NV_OK);
		REQUIRE(sd_va_unregister_gpu_vaspace(&s, &e, &uv) == SD_NV_ERR_INVALID_DEVICE);
		REQUIRE(node.used[2] == SD_VASPACE_HELD && session_objs(2) == 3);
		sd_va_destroy(&s2, &e);
		sd_va_destroy(&s, &e);
		REQUIRE(node.used[2] == 0 && session_objs(2) == 2);
		sd_file_release(&ctl);
	}
	/* Unregistering the GPU releases its channels too. */
	sd_file_init(&ctl, &node, SD_CTL_MINOR);
	setup(&ctl, 0xc1e00020, 2);
	h = 0x3002;
	REQUIRE(alloc(&ctl, 0, 0xc1e00020, 0x1000, &h, SD_TURING_CHANNEL_GPFIFO_A, &ch, sizeof(ch)) == SD_NV_OK);
	REQUIRE(sd_va_register_gpu(&s, &e, r.gpuUuid) == SD_NV_OK);
	REQUIRE(sd_va_register_channel(&s, &e, &r) == SD_NV_OK);
	sd_file_release(&ctl);
	REQUIRE(node.used[2] == SD_CHANNEL_HELD);
	REQUIRE(sd_va_unregister_gpu(&s, &e, r.gpuUuid) == SD_NV_OK && node.used[2] == 0);
	sd_va_destroy(&s, &e);
	sd_uvm_sessions_free(&node);
	REQUIRE(node.clients == NULL);
	caller_pid = 1000;
}

/*
 * VA ranges (NV50_MEMORY_VIRTUAL): the checks, the size in big pages, the page tables RM
 * pins for one neither LAZY nor EXTERNALLY_MANAGED (the driver's own memory: in the GPU's
 * figure, in no process's), the range's size as the driver's figure of the object (none
 * past 32 bits of 4 KiB pages), a duplicate naming the same tables, and a range going
 * with the VA space it is in.
 */
static void test_ranges(void)
{
	struct sd_nv0041_surface_info l[2] = {
		{ SD_NV0041_SURFACE_INFO_INDEX_PHYS_SIZE, 0 },
		{ SD_NV0041_SURFACE_INFO_INDEX_ADDR_SPACE_TYPE, 0 } };
	struct sd_vaspace_alloc va = { 0 };
	struct sd_memory_alloc m;
	struct sd_file ctl;
	sd_u64 listed;
	sd_u32 h;

	REQUIRE(sd_range_tables(64 * MiB) == 32 * (4096 + 256) + 3 * 4096);
	REQUIRE(sd_range_tables(1) == 4096 + 256 + 3 * 4096);
	sd_file_init(&ctl, &node, SD_CTL_MINOR);
	gpu_open_mask = 1;
	setup(&ctl, 0x20, 0);
	m = vidmem(64 * MiB);
	h = 0x4000;
	REQUIRE(alloc(&ctl, 0, 0x20, 0x1000, &h, SD_NV50_MEMORY_VIRTUAL, &m, sizeof(m)) == SD_NV_ERR_INVALID_ARGUMENT);
	m.flags = SD_ALLOC_FLAGS_VIRTUAL;
	m.owner = 0;
	REQUIRE(alloc(&ctl, 0, 0x20, 0x1000, &h, SD_NV50_MEMORY_VIRTUAL, &m, sizeof(m)) == SD_NV_ERR_INVALID_OWNER);
	m = vidmem(~0ULL);
	m.flags = SD_ALLOC_FLAGS_VIRTUAL;
	REQUIRE(alloc(&ctl, 0, 0x20, 0x1000, &h, SD_NV50_MEMORY_VIRTUAL, &m, sizeof(m)) == SD_NV_ERR_NO_MEMORY);
	m = vidmem(64 * MiB - 1);
	m.flags = SD_ALLOC_FLAGS_VIRTUAL;
	m.hVASpace = 0x1234;
	REQUIRE(alloc(&ctl, 0, 0x20, 0x1000, &h, SD_NV50_MEMORY_VIRTUAL, &m, sizeof(m)) == SD_NV_ERR_OBJECT_NOT_FOUND);
	m.hVASpace = 0x1001;
	REQUIRE(alloc(&ctl, 0, 0x20, 0x1000, &h, SD_NV50_MEMORY_VIRTUAL, &m, sizeof(m)) == SD_NV_ERR_INVALID_OBJECT_HANDLE);
	REQUIRE(node.used[0] == 0);
	m.hVASpace = 0;
	REQUIRE(alloc(&ctl, 1, 0x20, 0x1001, &h, SD_NV50_MEMORY_VIRTUAL, &m, sizeof(m)) == SD_NV_ERR_INVALID_OBJECT_PARENT);
	REQUIRE(alloc(&ctl, 1, 0x20, 0x1000, &h, SD_NV50_MEMORY_VIRTUAL, &m, sizeof(m)) == SD_NV_OK);
	memcpy(&m, umem + 4096, sizeof(m));
	REQUIRE(m.size == 64 * MiB && m.limit == 64 * MiB - 1);
	REQUIRE(node.used[0] == sd_range_tables(64 * MiB));
	listed = 0;
	sd_gpu_clients(&node, 0, add_bytes, &listed);
	REQUIRE(listed == 0);
	REQUIRE(kop_info(0x20, 0x4000, l, 2, sizeof(struct sd_nv0041_get_surface_info)) == SD_NV_OK);
	REQUIRE(l[0].data == 64 * MiB / 4096 && l[1].data == SD_ADDR_SPACE_TYPE_INVALID);
	/* A LAZY one pins nothing; one of 16 TiB has no size the driver can say. */
	m = vidmem(16ULL << 40);
	m.flags = SD_ALLOC_FLAGS_VIRTUAL | SD_ALLOC_FLAGS_LAZY;
	h = 0x4001;
	REQUIRE(alloc(&ctl, 0, 0x20, 0x1000, &h, SD_NV50_MEMORY_VIRTUAL, &m, sizeof(m)) == SD_NV_OK);
	REQUIRE(node.used[0] == sd_range_tables(64 * MiB));
	REQUIRE(kop_info(0x20, 0x4001, l, 2, sizeof(struct sd_nv0041_get_surface_info)) == SD_NV_ERR_OUT_OF_RANGE);
	/* A duplicate names the same tables, which go with the last name. */
	h = 0x4002;
	REQUIRE(dup(&ctl, 0x20, 0x1000, &h, 0x20, 0x4000) == SD_NV_OK);
	REQUIRE(rmfree(&ctl, 0x20, 0x4000) == SD_NV_OK && node.used[0] == sd_range_tables(64 * MiB));
	REQUIRE(rmfree(&ctl, 0x20, 0x4002) == SD_NV_OK && node.used[0] == 0);
	/* In a VA space of its own: no duplicate, and freed with the space. */
	h = 0x5000;
	REQUIRE(alloc(&ctl, 0, 0x20, 0x1000, &h, SD_FERMI_VASPACE_A, &va, sizeof(va)) == SD_NV_OK);
	m = vidmem(MiB);
	m.flags = SD_ALLOC_FLAGS_VIRTUAL;
	m.hVASpace = 0x5000;
	h = 0x4003;
	REQUIRE(alloc(&ctl, 0, 0x20, 0x1000, &h, SD_NV50_MEMORY_VIRTUAL, &m, sizeof(m)) == SD_NV_OK);
	REQUIRE(node.used[0] == SD_VASPACE_HELD + sd_range_tables(MiB));
	h = 0x4004;
	REQUIRE(dup(&ctl, 0x20, 0x1000, &h, 0x20, 0x4003) == SD_NV_ERR_INVALID_DEVICE);
	REQUIRE(rmfree(&ctl, 0x20, 0x5000) == SD_NV_OK && node.used[0] == 0);
	REQUIRE(rmfree(&ctl, 0x20, 0x4003) == SD_NV_ERR_OBJECT_NOT_FOUND);
	sd_file_release(&ctl);
	REQUIRE(node.clients == NULL);
}

int main(void)
{
	REQUIRE(sd_node_init(&node, 4, 15109 * MiB, "535.261.03") == SD_OK);
	test_version();
	test_card_info_attach();
	test_alloc_tree();
	test_clients_listed();
	test_device_rules();
	test_device_vas();
	test_memory_rules();
	test_bad_input();
	test_layouts();
	test_kernel_client();
	test_dup();
	test_register_fd();
	test_dmabuf();
	test_vaspace();
	test_uvm_tables();
	test_uvm_managed();
	test_uvm_pools();
	test_uvm_channels();
	test_channels();
	test_gpu_of();
	test_ranges();
	REQUIRE(live_allocs == 0);
	printf("simdrv unit: all passed\n");
	return 0;
}
