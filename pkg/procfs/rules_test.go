package procfs

import (
	"errors"
	"syscall"
	"testing"
)

const (
	idA = "0123456789ab0123456789ab0123456789ab0123456789ab0123456789abcdef"
	idB = "bbbbbbbbbbbb"
)

func TestAddRules(t *testing.T) {
	full := func(s *State) {
		g := s.GPU(0)
		for i := 0; i < g.MaxInst; i++ {
			g.Instances = append(g.Instances, Instance{ID: string(rune('a'+i%6)) + "00000000000", Memsize: 1})
		}
	}
	heavy := func(s *State) {
		s.GPU(0).Instances = []Instance{{ID: idB, Memsize: 1, Weight: 15}}
		s.GPU(0).FreeWeight = 1
	}
	for _, tc := range []struct {
		name  string
		setup func(*State)
		req   AddRequest
		errno syscall.Errno
	}{
		{"ok", nil, AddRequest{GPU: 0, ID: idA, Memsize: 10, Weight: 1}, 0},
		{"short id", nil, AddRequest{GPU: 0, ID: "abc", Memsize: 10, Weight: 1}, syscall.EINVAL},
		{"upper-case id", nil, AddRequest{GPU: 0, ID: "ABCDEF012345", Memsize: 10, Weight: 1}, syscall.EINVAL},
		{"65 chars", nil, AddRequest{GPU: 0, ID: idA + "0", Memsize: 10, Weight: 1}, syscall.EINVAL},
		{"unknown GPU", nil, AddRequest{GPU: 9, ID: idA, Memsize: 10, Weight: 1}, syscall.ENODEV},
		{"duplicate by short id", func(s *State) { s.GPU(0).Instances = []Instance{{ID: idA[:12], Memsize: 1, Weight: 1}} },
			AddRequest{GPU: 0, ID: idA, Memsize: 10, Weight: 1}, syscall.EEXIST},
		{"no memsize, no default", nil, AddRequest{GPU: 0, ID: idA, Weight: 1}, syscall.EINVAL},
		{"no memsize, default", func(s *State) { s.DefaultMemsize = 5 }, AddRequest{GPU: 0, ID: idA, Weight: 1}, 0},
		{"memsize 2^63", nil, AddRequest{GPU: 0, ID: idA, Memsize: 1 << 63, Weight: 1}, syscall.EINVAL},
		{"weight -1", nil, AddRequest{GPU: 0, ID: idA, Memsize: 1, Weight: -1}, syscall.EINVAL},
		{"weight 17 > max_inst", nil, AddRequest{GPU: 0, ID: idA, Memsize: 1, Weight: 17}, syscall.EINVAL},
		{"weight 0", nil, AddRequest{GPU: 0, ID: idA, Memsize: 1, Weight: 0}, 0},
		{"max_inst reached", full, AddRequest{GPU: 0, ID: idA, Memsize: 1, Weight: 0}, syscall.ENOSPC},
		{"weight past free", heavy, AddRequest{GPU: 0, ID: idA, Memsize: 1, Weight: 2}, syscall.ENOSPC},
		{"weight = free", heavy, AddRequest{GPU: 0, ID: idA, Memsize: 1, Weight: 1}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewState(2)
			if tc.setup != nil {
				tc.setup(s)
			}
			before := len(s.GPU(0).Instances)
			_, err := s.Add(tc.req)
			if tc.errno == 0 {
				if err != nil {
					t.Fatal(err)
				}
				g := s.GPU(0)
				if len(g.Instances) != before+1 || g.FreeWeight != g.MaxInst-g.WeightUsed() {
					t.Fatalf("after add: %+v", g)
				}
				return
			}
			if !errors.Is(err, tc.errno) {
				t.Fatalf("err = %v, want %v", err, tc.errno)
			}
			if len(s.GPU(0).Instances) != before {
				t.Fatal("refused add changed the state")
			}
		})
	}
}

func TestDefaultMemsizeApplies(t *testing.T) {
	s := NewState(1)
	s.DefaultMemsize = 4096
	in, err := s.Add(AddRequest{GPU: 0, ID: idA, Weight: 1})
	if err != nil || in.Memsize != 4096 || in.ID != idA[:12] {
		t.Fatalf("in = %+v, err = %v", in, err)
	}
}

func TestDel(t *testing.T) {
	s := NewState(1)
	if _, err := s.Add(AddRequest{GPU: 0, ID: idA, Memsize: 1, Weight: 3}); err != nil {
		t.Fatal(err)
	}
	if s.GPU(0).FreeWeight != 13 {
		t.Fatalf("free_weight %d, want 13", s.GPU(0).FreeWeight)
	}
	if err := s.Del(0, idA[:12]); err != nil {
		t.Fatal(err)
	}
	if s.GPU(0).FreeWeight != 16 || len(s.GPU(0).Instances) != 0 {
		t.Fatalf("after del: %+v", s.GPU(0))
	}
	if err := s.Del(0, idA); !errors.Is(err, syscall.ENOENT) {
		t.Fatalf("second del: %v", err)
	}
	if err := s.Del(3, idA); !errors.Is(err, syscall.ENODEV) {
		t.Fatalf("del on GPU 3: %v", err)
	}
}

func TestSetGPURules(t *testing.T) {
	for _, tc := range []struct {
		key   GPUKey
		v     int64
		errno syscall.Errno
	}{
		{KeyMaxInst, 1, syscall.EBUSY}, // two instances registered below
		{KeyMaxInst, 2, syscall.EBUSY}, // weight 3 in use
		{KeyMaxInst, 3, 0},
		{KeyMaxInst, 25, 0},
		{KeyMaxInst, 26, syscall.EINVAL},
		{KeyMaxInst, 0, syscall.EINVAL},
		{KeyPolicy, 0, 0},
		{KeyPolicy, 5, 0},
		{KeyPolicy, 6, syscall.EINVAL},
		{KeyPolicy, -1, syscall.EINVAL},
		{KeyPrioRatio, 19, syscall.EINVAL},
		{KeyPrioRatio, 20, 0},
		{KeyPrioRatio, 99, 0},
		{KeyPrioRatio, 100, syscall.EINVAL},
		{"free_weight", 3, syscall.EINVAL},
	} {
		s := NewState(1)
		s.Add(AddRequest{GPU: 0, ID: idA, Memsize: 1, Weight: 2})
		s.Add(AddRequest{GPU: 0, ID: idB, Memsize: 1, Weight: 1})
		before := *s.GPU(0)
		err := s.SetGPU(0, tc.key, tc.v)
		if tc.errno == 0 && err != nil || tc.errno != 0 && !errors.Is(err, tc.errno) {
			t.Errorf("%s=%d: err = %v, want %v", tc.key, tc.v, err, tc.errno)
		}
		g := s.GPU(0)
		if tc.errno != 0 && (g.MaxInst != before.MaxInst || g.Policy != before.Policy || g.PrioRatio != before.PrioRatio) {
			t.Errorf("%s=%d: refused write changed %+v", tc.key, tc.v, g)
		}
		if g.FreeWeight != g.MaxInst-3 {
			t.Errorf("%s=%d: free_weight %d with max_inst %d", tc.key, tc.v, g.FreeWeight, g.MaxInst)
		}
	}
	if err := NewState(1).SetGPU(1, KeyPolicy, 0); !errors.Is(err, syscall.ENODEV) {
		t.Errorf("unknown GPU: %v", err)
	}
}

func TestSetInstanceRules(t *testing.T) {
	for _, tc := range []struct {
		key   InstanceKey
		v     int64
		held  uint64
		errno syscall.Errno
	}{
		{KeyMemsize, 0, 0, syscall.EINVAL},
		{KeyMemsize, 1, 0, 0},
		{KeyMemsize, 99, 100, syscall.EBUSY},
		{KeyMemsize, 100, 100, 0},
		{KeyWeight, 0, 0, 0},
		{KeyWeight, 14, 0, 0}, // 14 + the other instance's 2 = 16
		{KeyWeight, 15, 0, syscall.ENOSPC},
		{KeyWeight, 17, 0, syscall.EINVAL},
		{KeyWeight, -1, 0, syscall.EINVAL},
		{KeyHighPrio, 1, 0, 0},
		{KeyHighPrio, 2, 0, syscall.EINVAL},
		{"id", 1, 0, syscall.EINVAL},
	} {
		s := NewState(1)
		s.Add(AddRequest{GPU: 0, ID: idA, Memsize: 50, Weight: 1})
		s.Add(AddRequest{GPU: 0, ID: idB, Memsize: 1, Weight: 2})
		err := s.SetInstance(0, idA, tc.key, tc.v, tc.held)
		if tc.errno == 0 && err != nil || tc.errno != 0 && !errors.Is(err, tc.errno) {
			t.Errorf("%s=%d: err = %v, want %v", tc.key, tc.v, err, tc.errno)
		}
		in := s.GPU(0).Instance(idA)
		if tc.errno != 0 && (in.Memsize != 50 || in.Weight != 1 || in.HighPrio) {
			t.Errorf("%s=%d: refused write changed %+v", tc.key, tc.v, in)
		}
	}
	if err := NewState(1).SetInstance(0, idA, KeyWeight, 1, 0); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("unknown instance: %v", err)
	}
}

func TestValidID(t *testing.T) {
	for id, want := range map[string]bool{
		"0123456789ab": true, idA: true, "0123456789a": false, "0123456789aG": false, "": false, "0123456789ab ": false,
	} {
		if ValidID(id) != want {
			t.Errorf("ValidID(%q) = %v", id, !want)
		}
	}
}
