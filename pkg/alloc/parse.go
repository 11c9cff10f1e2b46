package alloc

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// maxGiB bounds every GiB and count value: far above any GPU, far below overflow.
const maxGiB = 1 << 20

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

// ParseWhole reads one decimal whole number of at least min for the value name. Signs, fractions, spaces and
// other bases are refused: the original takes plain integers and so does the kernel.
func ParseWhole(name, s string, min uint64) (uint64, error) {
	v, err := wholeNumber(s)
	if err != nil {
		return 0, valueErr(name, s, err.Error())
	}
	if v < min {
		return 0, valueErr(name, s, fmt.Sprintf("must be at least %d", min))
	}
	return v, nil
}

func wholeNumber(s string) (uint64, error) {
	if s == "" {
		return 0, errors.New("empty")
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%q is not a whole number", s)
		}
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || v > maxGiB {
		return 0, fmt.Errorf("%s is too large (at most %d)", s, maxGiB)
	}
	return v, nil
}

// parseMemList reads ALIYUN_COM_GPU_MEM_CONTAINER: one whole number of GiB per GPU,
// comma-separated. The empty value is the documented "disable", not an error.
func parseMemList(s string) ([]uint64, error) {
	if s == "" {
		return []uint64{0}, nil
	}
	items := strings.Split(s, ",")
	mem := make([]uint64, len(items))
	for i, item := range items {
		v, err := wholeNumber(item)
		if err != nil {
			return nil, valueErr(EnvMemContainer, s, fmt.Sprintf("item %d: %v (want whole GiB, e.g. 6 or 3,1)", i+1, err))
		}
		mem[i] = v
	}
	return mem, nil
}

// parseDeviceList reads a list of GPU indexes or UUIDs (as nvidia-smi -L prints them).
func parseDeviceList(name, s string) ([]string, error) {
	items := strings.Split(s, ",")
	seen := map[string]bool{}
	uuids := 0
	for i, item := range items {
		switch {
		case item == "":
			return nil, valueErr(name, s, fmt.Sprintf("item %d is empty", i+1))
		case strings.HasPrefix(item, "MIG-"):
			return nil, valueErr(name, s, fmt.Sprintf("item %d: MIG devices are not supported", i+1))
		case strings.HasPrefix(item, "GPU-"):
			uuids++
		default:
			if _, err := wholeNumber(item); err != nil {
				return nil, valueErr(name, s, fmt.Sprintf("item %d: %q is neither a GPU index nor a GPU-... UUID", i+1, item))
			}
			item = strconv.FormatUint(mustWhole(item), 10)
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

func mustWhole(s string) uint64 {
	v, _ := wholeNumber(s)
	return v
}
