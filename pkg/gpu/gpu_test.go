package gpu

import (
	"errors"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
)

func TestNVMLReadsMockMachine(t *testing.T) {
	srv := dgxa100.New()
	gpus, err := NVML{Lib: srv}.GPUs()
	if err != nil {
		t.Fatal(err)
	}
	if len(gpus) != 8 {
		t.Fatalf("got %d GPUs, want 8", len(gpus))
	}
	for i, g := range gpus {
		d := srv.Devices[i].(*dgxa100.Device)
		if g.Index != i || g.UUID != d.UUID || g.Name != d.Config.Name || g.MemoryBytes != 40960*MiB {
			t.Errorf("GPU %d = %+v, want index %d uuid %s 40960 MiB", i, g, i, d.UUID)
		}
	}
}

func TestNVMLFailuresNameTheSimulator(t *testing.T) {
	for name, tc := range map[string]func(*dgxa100.Server){
		"no library": func(s *dgxa100.Server) {
			s.InitFunc = func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }
		},
		"no devices": func(s *dgxa100.Server) {
			s.DeviceGetCountFunc = func() (int, nvml.Return) { return 0, nvml.SUCCESS }
		},
	} {
		t.Run(name, func(t *testing.T) {
			srv := dgxa100.New()
			tc(srv)
			_, err := NVML{Lib: srv}.GPUs()
			if !errors.Is(err, ErrNoGPU) || !strings.Contains(err.Error(), "CGPU_SIM=1") {
				t.Fatalf("err = %v, want ErrNoGPU naming CGPU_SIM=1", err)
			}
		})
	}
}

func TestNVMLDeviceErrorNamesGPU(t *testing.T) {
	srv := dgxa100.New()
	srv.Devices[3].(*dgxa100.Device).GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
		return nvml.Memory{}, nvml.ERROR_GPU_IS_LOST
	}
	_, err := NVML{Lib: srv}.GPUs()
	if err == nil || !strings.Contains(err.Error(), "GPU 3") || !strings.Contains(err.Error(), "memory") {
		t.Fatalf("err = %v, want it to name GPU 3 and memory", err)
	}
}

func TestSim(t *testing.T) {
	gpus, err := Sim{Count: SimDefaultCount, MemMiB: SimDefaultMemMiB}.GPUs()
	if err != nil {
		t.Fatal(err)
	}
	if len(gpus) != 4 {
		t.Fatalf("got %d GPUs", len(gpus))
	}
	want := GPU{Index: 1, UUID: "GPU-c6a1d000-0000-4000-8000-000000000001", Name: "Tesla T4", MemoryBytes: 15109 * MiB}
	if gpus[1] != want {
		t.Fatalf("GPU 1 = %+v, want %+v", gpus[1], want)
	}
	if _, err := (Sim{Count: 0, MemMiB: 1}).GPUs(); err == nil {
		t.Fatal("0 GPUs accepted")
	}
}
