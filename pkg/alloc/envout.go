package alloc

import (
	"strconv"
	"strings"
)

// Added is what a plan adds to the container environment it was decided from: the GPUs
// placement picked, MEM_DEV where it came from the device, and the bytes per GPU. The
// container then carries its whole decision, so the runtime, the in-container hook and
// the NVIDIA hook all read the same one. Variables the user set are never changed, except
// CGPU_MEM_LIMIT_BYTES: it is the plan's output, the budget libcgpu enforces without
// /dev/cgpu (so it never scales GiB itself), and must be the bytes the kernel holds.
func (p Plan) Added(given map[string]string) map[string]string {
	add := map[string]string{}
	if !p.Enabled {
		return add
	}
	add[EnvMemLimitBytes] = limitBytes(p.GPUs)
	visible := given[EnvVisible]
	if visible == "" {
		visible = indexList(p.GPUs)
		add[EnvVisible] = visible
	}
	if _, ok := given[EnvNvidiaVisible]; !ok {
		add[EnvNvidiaVisible] = visible
	}
	if given[EnvMemDev] == "" && p.GPUs[0].MemDevGiB != 0 && sameMemDev(p.GPUs) {
		add[EnvMemDev] = strconv.FormatUint(p.GPUs[0].MemDevGiB, 10)
	}
	return add
}

// Visible is every cgpu and NVIDIA variable the container gets: those given and those
// the plan adds.
func (p Plan) Visible(given map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range given {
		if strings.HasPrefix(k, "ALIYUN_COM_GPU_") || strings.HasPrefix(k, "CGPU_") || strings.HasPrefix(k, "NVIDIA_") {
			out[k] = v
		}
	}
	for k, v := range p.Added(given) {
		out[k] = v
	}
	return out
}

// limitBytes is CGPU_MEM_LIMIT_BYTES for the GPUs in the order the memory list's
// positions refer to, so libcgpu maps it to devices as it would the GiB list.
func limitBytes(a []Assignment) string {
	b := make([]string, len(a))
	for i, x := range a {
		b[i] = strconv.FormatUint(x.MemoryBytes, 10)
	}
	return strings.Join(b, ",")
}

func sameMemDev(a []Assignment) bool {
	for _, x := range a {
		if x.MemDevGiB != a[0].MemDevGiB {
			return false
		}
	}
	return true
}
