#!/usr/bin/env bash
# ABI conformance of the stand-in driver: compiles check.c against NVIDIA's headers of
# each release fetch.sh downloads (535.261.03 and 550.163.01), so any number, size or
# offset of lib/abi.h that differs from NVIDIA's fails the build; and checks that the
# module's ioctl entry carries the release's name. Exits non-zero on any mismatch.
# Where Debian's archive gives only the kernel-open half of a release (fetch.sh), the
# RM-side checks of that release cannot be made: said on stderr, not hidden.
set -euo pipefail
cd "$(dirname "$0")/.."
cache=$(conformance/fetch.sh)
cc=${CC:-cc}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0

# flat: a C text as one line, so declarations compare whatever their wrapping: runs of
# whitespace become one space, none is kept next to ( ) , ; * { }.
flat() { tr -s ' \t\n' '   ' | sed -E 's/ ?([(),;*{}]) ?/\1/g'; }

# fn FILE START: the lines of the function whose first line starts with START.
fn() { awk -v s="$2" 'index($0, s) == 1 { on = 1 } on { print } on && /^}/ { exit }' "$1"; }

# define_of NAME...: the first "#define NAME VALUE" among kernel-open's headers.
define_of() {
	local n v
	for n in "$@"; do
		v=$(grep -rhE "^#define[[:space:]]+$n[[:space:]]" "$inc" | awk '{print $3; exit}')
		[ -n "$v" ] && { echo "$v"; return; }
	done
	echo "run.sh: $ver: none of $* in $inc" >&2
	return 1
}

for ver in 535.261.03 550.163.01; do
	src=$cache/$ver
	inc=$src/kernel-open/common/inc
	kind=$(cat "$src/.kind")
	major=${ver%%.*}
	{
		echo "#define NVREF_MAJOR $(define_of NV_MAJOR_DEVICE_NUMBER)"
		echo "#define NVREF_CTL_MINOR $(define_of NV_CONTROL_DEVICE_MINOR NV_MINOR_DEVICE_NUMBER_CONTROL_DEVICE)"
		echo "#define NVREF_MAX_IOCTL_SIZE $(define_of NV_ABSOLUTE_MAX_IOCTL_SIZE)"
		echo "#define NVREF_FLAG_CONTROL $(define_of NV_FLAG_CONTROL)"
	} >"$out/nvref.h"
	flags=(-std=gnu11 -Wall -Werror -fsyntax-only -DSD_REF_MAJOR="$major" -I"$out" -Ilib -Iconformance/kshim)
	if [ "$kind" = source ]; then
		flags+=(-DSD_REF_RM -I"$src/src/common/sdk/nvidia/inc" -I"$src/src/nvidia/arch/nvalloc/unix/include")
	fi
	flags+=(-I"$inc" -I"$src/kernel-open/nvidia-uvm")
	if "$cc" "${flags[@]}" conformance/check.c; then
		echo "conformance $ver: $kind headers agree with lib/abi.h and kmod/nvabi.h"
	else
		echo "conformance $ver: MISMATCH with NVIDIA's headers (above)" >&2
		fail=1
	fi
	[ "$kind" = source ] ||
		echo "conformance $ver: NOTE: only kernel-open's headers (the archive lacks the source package): RM structs, classes and RM escapes checked against 535 only" >&2

	# The entry the real /dev/nvidia* file_operations name, against main.c's choice.
	theirs=$(grep -hoE '\.unlocked_ioctl[[:space:]]*=[[:space:]]*[a-z_]+' "$src"/kernel-open/nvidia/nv*.c | awk '{print $NF}' | head -1)
	if [ "$major" -ge 545 ]; then ours=nvidia_unlocked_ioctl; else ours=nvidia_frontend_unlocked_ioctl; fi
	if [ "$theirs" = "$ours" ] && grep -q "^noinline long $ours(" main.c; then
		echo "conformance $ver: ioctl entry $ours"
	else
		echo "conformance $ver: the real entry is '$theirs', main.c serves '$ours'" >&2
		fail=1
	fi

	# The open and release of the same file_operations as that ioctl entry (cgpu_km
	# follows a file's life by their names: kmod/nvhook.c's layout table), against
	# main.c's and the table's.
	for op in open release; do
		theirs=$(awk -v op="$op" -v entry="$ours" '
			/struct file_operations.*=/ { n = 0; delete f; inside = 1; next }
			inside && /^[[:space:]]*[.]/ { k = $1; sub(/^[.]/, "", k); v = $NF; sub(/,$/, "", v); f[k] = v }
			inside && /^};/ { inside = 0; if (f["unlocked_ioctl"] == entry) { print f[op]; exit } }
		' "$src"/kernel-open/nvidia/nv*.c)
		mine=$(awk -v op="$op" -v fops="fops_$([ "$major" -ge 545 ] && echo 545 || echo 535)" '
			$0 ~ "^static const struct file_operations " fops " = [{]" { inside = 1; next }
			inside && /^};/ { exit }
			inside && $1 == "." op { v = $NF; sub(/,$/, "", v); print v; exit }
		' main.c)
		if [ -n "$theirs" ] && [ "$theirs" = "$mine" ] && grep -q "^noinline int $mine(" main.c &&
			grep -Eq "\{ \"$ver\", (\"[a-z_]+\", )*\"$mine\"" ../kmod/nvhook.c; then
			echo "conformance $ver: $op entry $mine"
		else
			echo "conformance $ver: the real $op entry is '$theirs', main.c serves '$mine' (or kmod/nvhook.c's table differs)" >&2
			fail=1
		fi
	done

	# rm_ioctl's nv points to an nv_state_t whose first members are priv, os_state and
	# flags (kmod/nvabi.h's nva_nv_state_head, lib/abi.h's sd_nv_state_head): cgpu_km
	# reads flags to tell the control device's calls (NV_ESC_REGISTER_FD).
	if [ "$(awk '/^typedef struct nv_state_t/ {on = 1; next} on && /^[{]/ {next}
		on && NF && !/^ *[/][*]/ {gsub(/[[:space:]]+/, " "); sub(/ *[/][*].*/, ""); print; if (++n == 3) exit}' "$inc"/nv.h)" = \
		"$(printf ' void *priv;\n void *os_state;\n int flags;')" ]; then
		echo "conformance $ver: nv_state_t starts priv, os_state, flags"
	else
		echo "conformance $ver: nv_state_t's head differs from nva_nv_state_head" >&2
		fail=1
	fi

	# cgpu_km's hook on RM's entry (kmod/nvhook.c) rests on three facts of kernel-open:
	# nvidia_ioctl hands rm_ioctl its kernel copy of the block, rm_ioctl's arguments are
	# (sp, nv, nvfp, cmd, data, size), and nvfp is the first member of the file's private
	# data (so the hook's nvfp is the file's private_data). main.c serves the same.
	if grep -q 'rm_ioctl(sp, nv, &nvlfp->nvfp, arg_cmd, arg_copy, arg_size)' "$src"/kernel-open/nvidia/nv.c &&
		grep -Eq '^NV_STATUS +NV_API_CALL +rm_ioctl +\(nvidia_stack_t \*, nv_state_t \*, nv_file_private_t \*, NvU32, void \*, NvU32\);' "$inc"/nv.h &&
		[ "$(awk '/^typedef struct/ {n = 0; next} /^[{]/ {next} NF {l[n++] = $0}
			/^} nv_linux_file_private_t;/ {print l[0]; exit}' "$inc"/nv-linux.h)" = "    nv_file_private_t nvfp;" ] &&
		grep -q "^noinline u32 rm_ioctl(void \*sp, void \*nv, void \*nvfp, u32 cmd, void \*data, u32 size)" main.c; then
		echo "conformance $ver: rm_ioctl(sp, nv, nvfp, cmd, kernel copy, size), nvfp first in the file's private data"
	else
		echo "conformance $ver: rm_ioctl's call, declaration or nv_linux_file_private_t's first member differs from what cgpu_km hooks" >&2
		fail=1
	fi

	# Exports to a dma-buf: nvidia_ioctl serves NV_ESC_EXPORT_TO_DMABUF_FD itself, its
	# status what nv_dma_buf_export(nv, params) returns on the driver's kernel copy;
	# cgpu_km hooks that function by name (kmod/nvhook.c) and main.c serves it.
	if grep -q 'params->status = nv_dma_buf_export(nv, params);' "$src"/kernel-open/nvidia/nv.c &&
		grep -Eq '^NV_STATUS nv_dma_buf_export\(nv_state_t \*, nv_ioctl_export_to_dma_buf_fd_t \*\);' "$inc"/nv-dmabuf.h &&
		grep -q '^noinline u32 nv_dma_buf_export(void \*nv, struct sd_export_dmabuf \*params)' main.c &&
		grep -q '"nv_dma_buf_export"' ../kmod/nvhook.c; then
		echo "conformance $ver: NV_ESC_EXPORT_TO_DMABUF_FD's status is nv_dma_buf_export(nv, kernel copy)"
	else
		echo "conformance $ver: nv_dma_buf_export's call or declaration differs from what main.c serves and cgpu_km hooks" >&2
		fail=1
	fi

	# nvidia-uvm's numbers (uvm.c serves them; the C side's copy is lib/abi.h, Go's
	# pkg/inject/nvnodes.go): the region's name, its minors, the two commands served.
	u=$src/kernel-open/nvidia-uvm
	if grep -Eq '^#define NVIDIA_UVM_DEVICE_NAME +"nvidia-uvm"$' "$u/uvm.c" &&
		grep -Eq 'NVIDIA_UVM_PRIMARY_MINOR_NUMBER += 0,' "$u/uvm_common.h" &&
		grep -Eq 'NVIDIA_UVM_TOOLS_MINOR_NUMBER += 1,' "$u/uvm_common.h" &&
		grep -Eq '^#define UVM_INITIALIZE +0x30000001$' "$u/uvm_linux_ioctl.h" &&
		grep -Eq '^#define UVM_DEINITIALIZE +0x30000002$' "$u/uvm_linux_ioctl.h" &&
		tr -d ' \n' <"$u/uvm_linux_ioctl.h" | grep -q 'typedefstruct{NvU64flagsNV_ALIGN_BYTES(8);//INNV_STATUSrmStatus;//OUT}UVM_INITIALIZE_PARAMS;' &&
		grep -q '"nvidia-uvm"' lib/abi.h && grep -Eq 'SD_UVM_INITIALIZE[[:space:]]+0x30000001' lib/abi.h &&
		grep -Eq 'SD_UVM_DEINITIALIZE[[:space:]]+0x30000002' lib/abi.h; then
		echo "conformance $ver: nvidia-uvm: region nvidia-uvm, minors 0 and 1, UVM_INITIALIZE and UVM_DEINITIALIZE"
	else
		echo "conformance $ver: nvidia-uvm's name, minors, commands or UVM_INITIALIZE_PARAMS differ from lib/abi.h" >&2
		fail=1
	fi

	# Which modules a process's driver memory is held through (cgpu_km keeps a hot
	# update's reservation while the process holds a file of either, nvcarry.c's
	# carry_driver_file): the files' operations name their module, nvidia (535's frontend
	# serves the files, 545's nv.c) and nvidia_uvm.
	if cat "$src"/kernel-open/nvidia/nv*.c | tr -d ' \n' |
		grep -Eq 'staticstructfile_operations(nvidia|nv_frontend)_fops=\{\.owner=THIS_MODULE,' &&
		tr -d ' \n' <"$u/uvm.c" | grep -Eq 'staticconststructfile_operationsuvm_fops=\{[^}]*\.owner=THIS_MODULE,\};' &&
		grep -Eq '^obj-m \+= nvidia-uvm\.o$' "$u/nvidia-uvm.Kbuild" &&
		grep -q '!strcmp(m->name, "nvidia") || !strcmp(m->name, "nvidia_uvm")' ../kmod/nvcarry.c; then
		echo "conformance $ver: the driver's and nvidia-uvm's file operations name their modules, nvidia and nvidia_uvm"
	else
		echo "conformance $ver: the driver's or nvidia-uvm's file operations do not set .owner, or nvidia-uvm's module is not nvidia_uvm, as cgpu_km's carry_driver_file takes" >&2
		fail=1
	fi

	# cgpu_km hooks nvidia-uvm's own handlers by name (nvhook.c's NVH_UVM_*_SYM): the
	# sparse map, the dynamic parallelism region, the semaphore pool and the range's free
	# as uvm.c routes them (with the kernel copy of the parameters and the file:
	# uvm_api.h, read, not in the archive), and the release.
	if grep -Eq 'UVM_ROUTE_CMD_STACK_INIT_CHECK\(UVM_MAP_EXTERNAL_SPARSE, +uvm_api_map_external_sparse\);' "$u/uvm.c" &&
		grep -Eq 'UVM_ROUTE_CMD_STACK_INIT_CHECK\(UVM_FREE, +uvm_api_free\);' "$u/uvm.c" &&
		grep -Eq 'UVM_ROUTE_CMD_STACK_INIT_CHECK\(UVM_MAP_DYNAMIC_PARALLELISM_REGION, +uvm_api_map_dynamic_parallelism_region\);' "$u/uvm.c" &&
		grep -Eq 'UVM_ROUTE_CMD_ALLOC_INIT_CHECK\(UVM_ALLOC_SEMAPHORE_POOL, +uvm_api_alloc_semaphore_pool\);' "$u/uvm.c" &&
		grep -Eq '\.release += uvm_release_entry,' "$u/uvm.c" &&
		grep -Eq '^static int uvm_release_entry\(struct inode \*inode, struct file \*filp\)$' "$u/uvm.c" &&
		grep -q '#define NVH_UVM_SPARSE_SYM	"uvm_api_map_external_sparse"' ../kmod/nvhook.c &&
		grep -q '#define NVH_UVM_RANGE_FREE_SYM	"uvm_api_free"' ../kmod/nvhook.c &&
		grep -q '#define NVH_UVM_DP_REGION_SYM	"uvm_api_map_dynamic_parallelism_region"' ../kmod/nvhook.c &&
		grep -q '#define NVH_UVM_POOL_SYM	"uvm_api_alloc_semaphore_pool"' ../kmod/nvhook.c &&
		grep -q '#define NVH_UVM_CLOSE_SYM	"uvm_release_entry"' ../kmod/nvhook.c; then
		echo "conformance $ver: nvidia-uvm routes UVM_MAP_EXTERNAL_SPARSE to uvm_api_map_external_sparse, UVM_MAP_DYNAMIC_PARALLELISM_REGION to uvm_api_map_dynamic_parallelism_region, UVM_ALLOC_SEMAPHORE_POOL to uvm_api_alloc_semaphore_pool, UVM_FREE to uvm_api_free, and releases its file in uvm_release_entry, the names cgpu_km hooks"
	else
		echo "conformance $ver: nvidia-uvm's sparse map, dynamic parallelism region, semaphore pool, range free or release is not the function cgpu_km hooks by name" >&2
		fail=1
	fi

	# Managed memory's two ways in, which cgpu_km hooks by name (NVH_UVM_MMAP_SYM,
	# NVH_UVM_VA_SPACE_SYM): uvm_mmap makes every managed range through
	# uvm_va_range_create_mmap, defined outside uvm.c (uvm_va_range.c), so never inlined
	# into it; uvm_api_initialize hands UVM_INITIALIZE's flags to uvm_va_space_create,
	# defined in uvm_va_space.c with the flags last.
	if ! grep -q 'uvm_va_range_create_mmap(' <(grep -v 'status = uvm_va_range_create_mmap(va_space, current->mm, vma->vm_private_data, NULL);' "$u/uvm.c" | grep -v '^ *//') &&
		grep -q 'status = uvm_va_range_create_mmap(va_space, current->mm, vma->vm_private_data, NULL);' "$u/uvm.c" &&
		grep -q 'status = uvm_va_space_create(filp->f_mapping, &va_space, params->flags);' "$u/uvm.c" &&
		grep -Eq '^NV_STATUS uvm_va_space_create\(struct address_space \*mapping, uvm_va_space_t \*\*va_space_ptr, NvU64 flags\)$' "$u/uvm_va_space.c" &&
		grep -q '#define NVH_UVM_MMAP_SYM	"uvm_va_range_create_mmap"' ../kmod/nvhook.c &&
		grep -q '#define NVH_UVM_VA_SPACE_SYM	"uvm_va_space_create"' ../kmod/nvhook.c; then
		echo "conformance $ver: nvidia-uvm makes managed ranges in uvm_va_range_create_mmap, called by its mmap and defined elsewhere, and a va_space with UVM_INITIALIZE's flags in uvm_va_space_create, the names cgpu_km hooks"
	else
		echo "conformance $ver: nvidia-uvm's managed ranges or va_spaces are not made by the functions cgpu_km hooks by name" >&2
		fail=1
	fi

	# nvidia-uvm's external mappings hold the caller's memory through RM's interface to
	# UVM: nvUvmInterfaceDupMemory on map (filling UvmGpuMemoryInfo, whose layout check.c
	# checks), nvUvmInterfaceFreeDupedHandle on free. main.c serves both by these names.
	theirs=$(flat <"$inc/nv_uvm_interface.h")
	mine=$(flat <main.c)
	if ! [[ $theirs == *"NV_STATUS nvUvmInterfaceDupMemory(uvmGpuDeviceHandle device,NvHandle hClient,NvHandle hPhysMemory,NvHandle*hDupMemory,UvmGpuMemoryInfo*pGpuMemoryInfo);"* &&
		$theirs == *"NV_STATUS nvUvmInterfaceFreeDupedHandle(uvmGpuDeviceHandle device,NvHandle hPhysHandle);"* ]]; then
		echo "conformance $ver: nv_uvm_interface.h's nvUvmInterfaceDupMemory or nvUvmInterfaceFreeDupedHandle differs from what main.c serves" >&2
		fail=1
	elif ! [[ $mine == *"noinline u32 nvUvmInterfaceDupMemory(void*device,u32 hClient,u32 hPhysMemory,u32*hDupMemory,void*pGpuMemoryInfo){"* &&
		$mine == *"noinline u32 nvUvmInterfaceFreeDupedHandle(void*device,u32 hPhysHandle){"* ]]; then
		echo "conformance $ver: main.c does not define nvUvmInterfaceDupMemory(device, hClient, hPhysMemory, hDupMemory, pGpuMemoryInfo) and nvUvmInterfaceFreeDupedHandle(device, hPhysHandle)" >&2
		fail=1
	else
		echo "conformance $ver: nvUvmInterfaceDupMemory(device, hClient, hPhysMemory, &hDup, &info) and nvUvmInterfaceFreeDupedHandle(device, hPhysHandle)"
	fi

	# A channel registered with nvidia-uvm is retained through RM's interface to UVM
	# (uvm_user_channel.c) and released later: main.c serves both by these names, and
	# cgpu_km counts what they keep (nvhook.c).
	if ! [[ $theirs == *"NV_STATUS nvUvmInterfaceRetainChannel(uvmGpuAddressSpaceHandle vaSpace,NvHandle hClient,NvHandle hChannel,void**retainedChannel,UvmGpuChannelInstanceInfo*channelInstanceInfo);"* &&
		$theirs == *"void nvUvmInterfaceReleaseChannel(void*retainedChannel);"* ]]; then
		echo "conformance $ver: nv_uvm_interface.h's nvUvmInterfaceRetainChannel or nvUvmInterfaceReleaseChannel differs from what main.c serves" >&2
		fail=1
	elif ! [[ $mine == *"noinline u32 nvUvmInterfaceRetainChannel(void*vaSpace,u32 hClient,u32 hChannel,void**retainedChannel,void*channelInstanceInfo){"* &&
		$mine == *"noinline void nvUvmInterfaceReleaseChannel(void*retainedChannel){"* ]] ||
		! grep -q 'nvUvmInterfaceRetainChannel(user_channel->gpu_va_space->duped_gpu_va_space,' "$src/kernel-open/nvidia-uvm/uvm_user_channel.c" ||
		! grep -q 'nvUvmInterfaceReleaseChannel(user_channel->rm_retained_channel)' "$src/kernel-open/nvidia-uvm/uvm_user_channel.c"; then
		echo "conformance $ver: main.c does not define nvUvmInterfaceRetainChannel and nvUvmInterfaceReleaseChannel as nv_uvm_interface.h has them, or uvm_user_channel.c does not call them" >&2
		fail=1
	elif [ "$kind" = source ] &&
		! { fn "$src/src/nvidia/src/kernel/rmapi/nv_gpu_ops.c" "NV_STATUS nvGpuOpsRetainChannel(" | flat |
			grep -qF 'UVM_CHANNEL_RETAINER,' &&
		fn "$src/src/nvidia/src/kernel/rmapi/nv_gpu_ops.c" "static NV_STATUS nvGpuOpsGetChannelTsgInfo(" | flat |
			grep -qF '&hDupTsg,'; }; then
		echo "conformance $ver: nv_gpu_ops.c's retain does not duplicate the channel's group and make a UVM_CHANNEL_RETAINER, as lib/rm.c's uvm_retain does" >&2
		fail=1
	else
		echo "conformance $ver: nvUvmInterfaceRetainChannel(vaSpace, hClient, hChannel, &retained, &info) and nvUvmInterfaceReleaseChannel(retained), called by uvm_user_channel.c"
	fi

	# A GPU VA space registered with nvidia-uvm is duplicated through RM's interface to
	# UVM (uvm_va_space.c) and destroyed later: main.c serves both by these names, and
	# cgpu_km counts what they keep (nvhook.c).
	if ! [[ $theirs == *"NV_STATUS nvUvmInterfaceDupAddressSpace(uvmGpuDeviceHandle device,NvHandle hUserClient,NvHandle hUserVASpace,uvmGpuAddressSpaceHandle*vaSpace,UvmGpuAddressSpaceInfo*vaSpaceInfo);"* &&
		$theirs == *"void nvUvmInterfaceAddressSpaceDestroy(uvmGpuAddressSpaceHandle vaSpace);"* ]]; then
		echo "conformance $ver: nv_uvm_interface.h's nvUvmInterfaceDupAddressSpace or nvUvmInterfaceAddressSpaceDestroy differs from what main.c serves" >&2
		fail=1
	elif ! [[ $mine == *"noinline u32 nvUvmInterfaceDupAddressSpace(void*device,u32 hUserClient,u32 hUserVASpace,void**vaSpace,void*vaSpaceInfo){"* &&
		$mine == *"noinline void nvUvmInterfaceAddressSpaceDestroy(void*vaSpace){"* ]] ||
		! grep -q 'nvUvmInterfaceDupAddressSpace(uvm_gpu_device_handle(gpu),' "$src/kernel-open/nvidia-uvm/uvm_va_space.c" ||
		! grep -q 'nvUvmInterfaceAddressSpaceDestroy(gpu_va_space->duped_gpu_va_space)' "$src/kernel-open/nvidia-uvm/uvm_va_space.c"; then
		echo "conformance $ver: main.c does not define nvUvmInterfaceDupAddressSpace and nvUvmInterfaceAddressSpaceDestroy as nv_uvm_interface.h has them, or uvm_va_space.c does not call them" >&2
		fail=1
	elif [ "$kind" = source ] &&
		! fn "$src/src/nvidia/src/kernel/rmapi/nv_gpu_ops.c" "NV_STATUS nvGpuOpsDupAddressSpace(" | flat |
			grep -qF 'pRmApi->DupObject(pRmApi,session->handle,device->handle,&gpuVaSpace->handle,hUserClient,hUserVASpace,NV04_DUP_HANDLE_FLAGS_REJECT_KERNEL_DUP_PRIVILEGE);'; then
		echo "conformance $ver: nv_gpu_ops.c's nvGpuOpsDupAddressSpace does not duplicate the VA space into the session at the caller's privilege, as lib/rm.c's uvm_dup_vaspace does" >&2
		fail=1
	else
		echo "conformance $ver: nvUvmInterfaceDupAddressSpace(device, hUserClient, hUserVASpace, &vaSpace, &info) and nvUvmInterfaceAddressSpaceDestroy(vaSpace), called by uvm_va_space.c"
	fi

	# Those duplicates go into one RM client for every GPU, so a duplicate's handle is
	# unique across GPUs while it lives: the session uvm_global.c makes, in which
	# uvm_gpu.c makes each GPU's device (535 makes a session of its own per MIG
	# partition, which the stand-in does not model); RM's dupMemory duplicates into the
	# device's session and nvGpuOpsFreeDupedHandle frees there (nv_gpu_ops.c, where the
	# source package is fetched). The stand-in's uvm_session (lib/rm.c) is that client.
	u=$src/kernel-open/nvidia-uvm
	if ! grep -q 'nvUvmInterfaceSessionCreate(&g_uvm_global\.rm_session_handle' "$u/uvm_global.c" ||
		! grep -Eq 'nvUvmInterfaceDeviceCreate\((g_uvm_global\.rm_session_handle|uvm_global_session_handle\(\)),' "$u/uvm_gpu.c"; then
		echo "conformance $ver: nvidia-uvm does not make its GPUs' devices in its one global session (uvm_global.c, uvm_gpu.c)" >&2
		fail=1
	elif [ "$kind" = source ] &&
		! { fn "$src/src/nvidia/src/kernel/rmapi/nv_gpu_ops.c" "static NV_STATUS dupMemory(" | flat |
			grep -qF 'pRmApi->DupObject(pRmApi,session->handle,hParent,&dupedMemHandle,hClient,hPhysMemory,flags);' &&
		fn "$src/src/nvidia/src/kernel/rmapi/nv_gpu_ops.c" "NV_STATUS nvGpuOpsFreeDupedHandle(" | flat |
			grep -qF 'pRmApi->Free(pRmApi,device->session->handle,hPhysHandle);'; }; then
		echo "conformance $ver: nv_gpu_ops.c does not duplicate into, and free from, the device's session" >&2
		fail=1
	else
		mig=$(cat "$u"/*.c | grep -c 'uvm_rm_locked_call(nvUvmInterfaceSessionCreate(') || true
		echo "conformance $ver: nvidia-uvm's duplicates are in its one RM session for every GPU (sessions of its own per MIG partition: $([ "$mig" -gt 1 ] && echo yes || echo no))$([ "$kind" = source ] || echo "; nv_gpu_ops.c not in the archive: checked against 535 only")"
	fi

	# A client's one device of a GPU, and a device's own VA space (lib/rm.c's
	# alloc_object and device_vas): deviceInit refuses a second device of an instance in
	# a client; deviceInitClientShare takes the GPU's global VA space for hClientShare 0
	# and makes a new one for the device's own client, at its first use
	# (deviceGetDefaultVASpace); a channel group naming none takes its device's unless
	# the device has many.
	if [ "$kind" = source ]; then
		g=$src/src/nvidia/src/kernel/gpu
		init=$(fn "$g/device.c" "deviceInit_IMPL" | flat)
		share=$(fn "$g/device_share.c" "deviceInitClientShare" | flat)
		dflt=$(fn "$g/device_share.c" "deviceGetDefaultVASpace_IMPL" | flat)
		grp=$(fn "$g/fifo/kernel_channel_group_api.c" "kchangrpapiConstruct_IMPL" | flat)
		if [[ $init == *"status = deviceGetByInstance(pCallContext->pClient,deviceInst,&pExistingDevice);if(status == NV_OK){"*"return NV_ERR_INSUFFICIENT_RESOURCES;}"* &&
			$share == *"if(hClientShare == NV01_NULL_OBJECT){"*"gpugrpGetGlobalVASpace("*"else if(hClientShare == RES_GET_CLIENT_HANDLE(pDevice)){"*"vmmCreateVaspace("* &&
			$dflt == *"if(pDevice->pVASpace == NULL){status = deviceInitClientShare("* &&
			$grp == *"if((pDevice->vaMode != NV_DEVICE_ALLOCATION_VAMODE_MULTIPLE_VASPACES)||(hVASpace != 0)){"*"vaspaceGetByHandleOrDeviceDefault(pClient,pParams->hParent,hVASpace,&pVAS)"* ]]; then
			echo "conformance $ver: one device of a GPU a client; a device's own VA space made at its first use, by a channel group naming none (device.c, device_share.c, kernel_channel_group_api.c)"
		else
			echo "conformance $ver: device.c, device_share.c or kernel_channel_group_api.c do not make a device's VA space, or refuse a second device, as lib/rm.c does" >&2
			fail=1
		fi
	fi

	# What the GPU holds for video memory of 4 KiB pages: RM's physical allocator takes
	# it in 64 KiB pages, while the memory's descriptor (every size RM reports of it,
	# GET_SURFACE_INFO's PHYS_SIZE too) keeps the 4 KiB-rounded size. The stand-in's
	# SD_PMA_GRANULE and cgpu_km's NVA_PMA_GRANULE (its charge) rest on this.
	if [ "$kind" = source ]; then
		pma=$(fn "$src/src/nvidia/src/kernel/mem_mgr/video_mem.c" "_vidmemPmaAllocate" | flat)
		if [[ $pma == *"if(pageSize == RM_PAGE_SIZE){"*"pageSize = RM_PAGE_SIZE_64K;}"* &&
			$pma == *"pageCount =(NvU32)NV_DIV_AND_CEIL(size,pageSize);"* ]] &&
			grep -A2 'memdescDescribe(pAllocRequest->pMemDesc, ADDR_FBMEM,' "$src/src/nvidia/src/kernel/mem_mgr/video_mem.c" |
			grep -q 'pFbAllocInfo->adjustedSize);'; then
			echo "conformance $ver: RM's physical allocator takes video memory of 4 KiB pages in 64 KiB pages; its descriptor keeps the asked size (video_mem.c)"
		else
			echo "conformance $ver: video_mem.c's _vidmemPmaAllocate no longer takes 4 KiB-page memory in 64 KiB pages as SD_PMA_GRANULE and NVA_PMA_GRANULE say" >&2
			fail=1
		fi
	fi
done
exit "$fail"
