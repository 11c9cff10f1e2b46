package alloc

import (
	"fmt"
	"strconv"
	"strings"
)

// SelectMode says how the GPUs of a container are chosen.
type SelectMode int

// Selection modes.
const (
	// SelectCount lets placement pick Count GPUs.
	SelectCount SelectMode = iota
	// SelectAll takes every GPU of the node.
	SelectAll
	// SelectList takes the GPUs listed by index or UUID.
	SelectList
	// SelectNone gives the container no GPU.
	SelectNone
)

// Selection is the GPUs a container asks for.
type Selection struct {
	Mode  SelectMode
	Count int
	List  []string
	// From names what chose the GPUs, for messages.
	From string
}

// ParseGPUsFlag reads docker cgpu run's --gpus: "all", a count N that placement fills,
// docker's own "count=N" and "device=LIST" forms, or a LIST of indexes or UUIDs
// ("0,1", "GPU-..."). One bare number is a count, as in docker run --gpus 2.
func ParseGPUsFlag(s string) (Selection, error) {
	v := strings.Trim(s, `"`)
	from := "--gpus " + plain(s)
	bad := func(rule string) (Selection, error) { return Selection{}, &Error{Value: from, Rule: rule} }
	switch {
	case v == "all":
		return Selection{Mode: SelectAll, From: from}, nil
	case strings.HasPrefix(v, "device="):
		items, err := parseDeviceList("--gpus device", strings.TrimPrefix(v, "device="))
		return Selection{Mode: SelectList, List: items, From: from}, err
	case strings.HasPrefix(v, "count="):
		v = strings.TrimPrefix(v, "count=")
		if v == "all" {
			return Selection{Mode: SelectAll, From: from}, nil
		}
	case strings.Contains(v, ",") || strings.HasPrefix(v, "GPU-") || strings.HasPrefix(v, "MIG-"):
		items, err := parseDeviceList("--gpus", v)
		return Selection{Mode: SelectList, List: items, From: from}, err
	}
	n, err := whole(v, 1, maxGiB)
	if err != nil {
		return bad(fmt.Sprintf("%v; want all, a count, device=LIST or a list such as 0,1", err))
	}
	return Selection{Mode: SelectCount, Count: int(n), From: from}, nil
}

func indexList(a []Assignment) string {
	ids := make([]string, len(a))
	for i, g := range a {
		ids[i] = strconv.Itoa(g.Index)
	}
	return strings.Join(ids, ",")
}
