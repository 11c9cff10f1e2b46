package procfs

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// File names of the tree (SPEC.md).
const (
	fileDefaultMemsize = "default_memsize"
	fileInstCtl        = "inst_ctl"
	fileUpgrade        = "upgrade"
	fileVersion        = "version"
	fileFreeWeight     = "free_weight"
	fileMajor          = "major"
	fileID             = "id"
	fileMeminfo        = "meminfo"
)

// readTree reads every value of the tree at root. Both backends share the layout, so
// both read the same way; entries starting with a dot are the directory backend's
// half-written instances and are skipped.
func readTree(root string) (*State, error) {
	st := &State{}
	var err error
	if st.DefaultMemsize, err = readUint(filepath.Join(root, fileDefaultMemsize)); err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		idx, err := strconv.Atoi(e.Name())
		if err != nil || idx < 0 || !e.IsDir() || strconv.Itoa(idx) != e.Name() {
			continue
		}
		g, err := readGPU(filepath.Join(root, e.Name()), idx)
		if err != nil {
			return nil, err
		}
		st.GPUs = append(st.GPUs, g)
	}
	sort.Slice(st.GPUs, func(i, j int) bool { return st.GPUs[i].Index < st.GPUs[j].Index })
	return st, nil
}

func readGPU(dir string, idx int) (GPUState, error) {
	g := GPUState{Index: idx}
	for _, f := range []struct {
		name string
		dst  *int
	}{{string(KeyMaxInst), &g.MaxInst}, {string(KeyPolicy), &g.Policy}, {string(KeyPrioRatio), &g.PrioRatio},
		{fileFreeWeight, &g.FreeWeight}, {fileMajor, &g.Major}} {
		v, err := readInt(filepath.Join(dir, f.name))
		if err != nil {
			return g, err
		}
		*f.dst = v
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return g, err
	}
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		in, err := readInstance(filepath.Join(dir, e.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			// Removed between listing and reading (an "echo del > inst_ctl" by hand).
			continue
		}
		if err != nil {
			return g, err
		}
		g.Instances = append(g.Instances, in)
	}
	return g, nil
}

func readInstance(dir string) (Instance, error) {
	in := Instance{ID: filepath.Base(dir)}
	var err error
	if in.Memsize, err = readUint(filepath.Join(dir, string(KeyMemsize))); err != nil {
		return in, err
	}
	if in.Weight, err = readInt(filepath.Join(dir, string(KeyWeight))); err != nil {
		return in, err
	}
	hp, err := readInt(filepath.Join(dir, string(KeyHighPrio)))
	in.HighPrio = hp == 1
	return in, err
}

func readValue(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

func readUint(path string) (uint64, error) {
	s, err := readValue(path)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseUint(s, 10, 63)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a number of bytes", path, s)
	}
	return v, nil
}

func readInt(path string) (int, error) {
	s, err := readValue(path)
	if err != nil {
		return 0, err
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a number", path, s)
	}
	return v, nil
}

// Meminfo is an instance's meminfo file: the memory it has left and what each of its
// processes holds.
type Meminfo struct {
	Free  uint64
	Procs []ProcMem
}

// ProcMem is one "PID: P Mem: M" line; PID is the process's id on the host.
type ProcMem struct {
	PID int
	Mem uint64
}

// Held is the memory the instance's processes hold.
func (m Meminfo) Held() uint64 {
	var held uint64
	for _, p := range m.Procs {
		held += p.Mem
	}
	return held
}

// ReadMeminfo reads the meminfo of instance id on GPU gpu of the tree at root. Both
// backends share the layout, so it serves either.
func ReadMeminfo(root string, gpu int, id string) (Meminfo, error) {
	return readMeminfo(filepath.Join(root, strconv.Itoa(gpu), ShortID(id), fileMeminfo))
}

func readMeminfo(path string) (Meminfo, error) {
	var m Meminfo
	f, err := os.Open(path)
	if err != nil {
		return m, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var p ProcMem
		if n, _ := fmt.Sscanf(sc.Text(), "PID: %d Mem: %d", &p.PID, &p.Mem); n == 2 {
			m.Procs = append(m.Procs, p)
			continue
		}
		fmt.Sscanf(sc.Text(), "Free: %d", &m.Free)
	}
	return m, sc.Err()
}

// readHeld is the memory an instance's processes hold; a missing meminfo holds none.
func readHeld(path string) (uint64, error) {
	m, err := readMeminfo(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	return m.Held(), err
}

// fileEnforcement exists with cgpu_km's enforce=1 only: "enforcement: on (driver V)" or
// "enforcement: off (why)" (docs/kmod.md).
const fileEnforcement = "enforcement"

// ReadEnforcement is what cgpu_km says of its enforcement at the NVIDIA driver's
// boundary, the line's text after "enforcement: " ("on (driver 535.261.03)", "off (driver
// 999.1 unknown)"), or "" when the tree has no such file (enforce=0, or not cgpu_km's).
func ReadEnforcement(root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, fileEnforcement))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	// The first line; the next ones are counters (docs/kmod.md).
	line, _, _ := strings.Cut(string(b), "\n")
	v, ok := strings.CutPrefix(line, "enforcement: ")
	if !ok || (!strings.HasPrefix(v, "on (") && !strings.HasPrefix(v, "off (")) {
		return "", fmt.Errorf("%s: %q is not \"enforcement: on|off (...)\"", filepath.Join(root, fileEnforcement), line)
	}
	return v, nil
}

// EnforcementWarning is the warning for an enforcement state ReadEnforcement read: "" when
// it is on or was never asked for (no file), else one line saying where budgets hold.
func EnforcementWarning(state string) string {
	if !strings.HasPrefix(state, "off") {
		return ""
	}
	return "warning: cgpu_km runs with enforce=1 but enforcement at the NVIDIA driver is " + state +
		": budgets hold only in processes that run libcgpu (docs/kmod.md)"
}
