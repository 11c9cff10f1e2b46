package alloc

import (
	"strconv"
	"strings"
)

// Added is what a plan adds to the container environment it was decided from: the GPUs
// placement picked, and MEM_DEV where it came from the device. The container then
// carries its whole decision, so the runtime, the in-container hook and the NVIDIA hook
// all read the same one; variables the user set are never changed.
func (p Plan) Added(given map[string]string) map[string]string {
	add := map[string]string{}
	if !p.Enabled {
		return add
	}
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
	out := p.Added(given)
	for k, v := range given {
		if strings.HasPrefix(k, "ALIYUN_COM_GPU_") || strings.HasPrefix(k, "CGPU_") || strings.HasPrefix(k, "NVIDIA_") {
			out[k] = v
		}
	}
	return out
}

func sameMemDev(a []Assignment) bool {
	for _, x := range a {
		if x.MemDevGiB != a[0].MemDevGiB {
			return false
		}
	}
	return true
}
