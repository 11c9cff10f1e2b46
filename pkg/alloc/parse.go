package alloc

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cgpu-project/cgpu/pkg/uapi"
)

// The value rules of docs/contracts.md §6. libcgpu/src/config.c implements the same rules
// for what it reads; testdata/parse-cases.txt holds both to one table of verdicts, so
// a change here that the C side does not make (or the reverse) fails a test.
const (
	// maxGiB bounds every GiB and count value: far above any GPU, far below overflow.
	maxGiB = 1 << 20
	// maxListItems: a list never needs more entries than the module keeps GPUs, and
	// libcgpu's fixed table holds no more.
	maxListItems = uapi.MaxGPUs
	// maxWeight is the highest max_inst, so no weight above it can ever fit a GPU.
	maxWeight = uapi.MaxInstMax
)

func valueErr(name, value, rule string) error {
	return &Error{Value: name + "=" + strconv.Quote(value), Rule: rule}
}

// plain shows a user's value as typed when that is safe on one line, else quoted.
func plain(s string) string {
	for _, c := range s {
		if c <= ' ' || c > '~' || c == '"' {
			return strconv.Quote(s)
		}
	}
	return s
}

// ParseWhole reads one whole number of min..maxGiB for the value name (whole's rule).
func ParseWhole(name, s string, min uint64) (uint64, error) {
	v, err := whole(s, min, maxGiB)
	if err != nil {
		return 0, valueErr(name, s, err.Error())
	}
	return v, nil
}

// whole reads one decimal number of min..max. Signs, spaces, fractions and other bases
// are refused: the original takes plain integers and so does the kernel. Leading zeros
// are decimal, as the kernel's writes take them.
func whole(s string, min, max uint64) (uint64, error) {
	if s == "" {
		return 0, errors.New("empty")
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, errors.New("not a whole number (digits 0-9 only)")
		}
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || v > max {
		return 0, fmt.Errorf("too large (at most %d)", max)
	}
	if v < min {
		return 0, fmt.Errorf("must be at least %d", min)
	}
	return v, nil
}

// list reads a memory list: up to maxListItems whole numbers of 0..max, comma-separated,
// no empty item. nil means cGPU off: the empty value, or a 0 anywhere (SPEC.md), once the
// whole list is well formed, so a typo after a 0 is still reported.
func list(s string, max uint64) ([]uint64, error) {
	if s == "" {
		return nil, nil
	}
	items := strings.Split(s, ",")
	if len(items) > maxListItems {
		return nil, fmt.Errorf("more than %d items", maxListItems)
	}
	vals := make([]uint64, len(items))
	off := false
	for i, item := range items {
		v, err := whole(item, 0, max)
		if err != nil {
			return nil, fmt.Errorf("item %d: %v", i+1, err)
		}
		vals[i], off = v, off || v == 0
	}
	if off {
		return nil, nil
	}
	return vals, nil
}

// boolean reads CGPU_DISABLE. A short fixed set rather than strconv.ParseBool's: one
// letter (t, f) is more likely a typo than a setting, and libcgpu matches it exactly.
func boolean(s string) (bool, error) {
	switch s {
	case "true", "True", "TRUE", "1":
		return true, nil
	case "", "false", "False", "FALSE", "0":
		return false, nil
	}
	return false, errors.New("not a boolean (true, True, TRUE, 1, false, False, FALSE, 0 or empty)")
}

// parseDeviceList reads a list of GPU indexes or UUIDs (as nvidia-smi -L prints them).
func parseDeviceList(name, s string) ([]string, error) {
	items := strings.Split(s, ",")
	seen := map[string]bool{}
	uuids := 0
	for i, item := range items {
		switch {
		case item == "":
			return nil, valueErr(name, s, fmt.Sprintf("item %d: empty", i+1))
		case strings.HasPrefix(item, "MIG-"):
			return nil, valueErr(name, s, fmt.Sprintf("item %d: MIG devices are not supported", i+1))
		case strings.HasPrefix(item, "GPU-"):
			uuids++
		default:
			n, err := whole(item, 0, maxGiB)
			if err != nil {
				return nil, valueErr(name, s, fmt.Sprintf("item %d: %q is neither a GPU index nor a GPU-... UUID", i+1, item))
			}
			item = strconv.FormatUint(n, 10)
		}
		if seen[item] {
			return nil, valueErr(name, s, fmt.Sprintf("GPU %s is listed twice", item))
		}
		seen[item] = true
		items[i] = item
	}
	if uuids != 0 && uuids != len(items) {
		return nil, valueErr(name, s, "mixes indexes and UUIDs; use one kind")
	}
	return items, nil
}
