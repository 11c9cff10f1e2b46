package statset

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cgpu-project/cgpu/pkg/gpu"
	"github.com/cgpu-project/cgpu/pkg/metrics/metricstest"
	"github.com/cgpu-project/cgpu/pkg/procfs"
	"github.com/cgpu-project/cgpu/pkg/stat"
	"github.com/cgpu-project/cgpu/pkg/stat/stattest"
)

func statJSON(t *testing.T, args ...string) *stat.Snapshot {
	t.Helper()
	out := must(t, append([]string{"cgpu", "stat", "--format", "json"}, args...)...)
	if err := stattest.Validate([]byte(out)); err != nil {
		t.Fatalf("the document breaks stat.schema.json: %v\n%s", err, out)
	}
	var s stat.Snapshot
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

func pf(v float64) *float64 { return &v }

// idleUtil: nobody runs GPU work in the fixture. On cgpu_km's tree (root) the scheduler
// says so (0); the simulated tree has no scheduler, and the simulated GPU keeps no
// utilisation for NVML: not known.
func idleUtil(s *stat.Snapshot, u *float64, source string) bool {
	if s.Kernel {
		return u != nil && *u == 0 && source == stat.SourceScheduler
	}
	return u == nil && source == ""
}

// Busy instances on the kernel's scheduler: web and db (weights 1:2, neither high
// priority) on GPU 0 under the weight policy, each with a kt client that takes every
// slice it may (kt sched slice: test/kmod/kt_sched.c) show a third and two thirds of
// what they used together in the last complete second, from the scheduler's figures.
func TestUtilisationFromScheduler(t *testing.T) {
	fixture(t)
	kt := os.Getenv("CGPU_STATSET_KT")
	if kt == "" || !openNode(t).Tree.Kernel() {
		t.Skip("needs cgpu_km and kt (55-vm-stat-set.sh)")
	}
	err := fx.tr.Update(func(tx procfs.Tx) error {
		return errors.Join(tx.SetInstance(0, fx.db.ID, procfs.KeyHighPrio, 0), tx.SetGPU(0, procfs.KeyPolicy, 2))
	})
	if err != nil {
		t.Fatal(err)
	}
	grants := func() map[string]uint64 {
		g := map[string]uint64{}
		for _, in := range statJSON(t, "--gpu", "0").GPUs[0].Instances {
			if in.Sched != nil {
				g[in.ID] = in.Sched.Grants
			}
		}
		return g
	}
	before := grants()
	var clients []*exec.Cmd
	for _, c := range []container{fx.web, fx.db} {
		// Longer than the test needs: they are stopped once the sample is taken.
		cmd := exec.Command(kt, "sched", "-c", ownCgroup(t, c), "slice", "0", "60", "500")
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		clients = append(clients, cmd)
	}
	stop := func() {
		for _, c := range clients {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
		clients = nil
	}
	defer stop()
	// On a loaded host a client can take seconds to start: the sample counts only once
	// both were granted slices, and then two whole seconds later, so that the last
	// complete second is one in which both ran.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		now := grants()
		if now[fx.web.ID[:12]] > before[fx.web.ID[:12]] && now[fx.db.ID[:12]] > before[fx.db.ID[:12]] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the clients were granted no slices in 60 s: before %v, now %v", before, now)
		}
	}
	time.Sleep(2100 * time.Millisecond)
	s := statJSON(t, "--gpu", "0")
	stop()
	util := map[string]float64{}
	for _, in := range s.GPUs[0].Instances {
		if in.Utilization == nil || in.UtilizationSource != stat.SourceScheduler || in.Sched == nil || in.Sched.Grants == 0 {
			t.Fatalf("instance %s: utilisation %v from %q, sched %+v", in.ID, in.Utilization, in.UtilizationSource, in.Sched)
		}
		util[in.ID] = *in.Utilization
	}
	web, db := util[fx.web.ID[:12]], util[fx.db.ID[:12]]
	g := s.GPUs[0]
	t.Logf("last second: web %.2f %%, db %.2f %%, GPU %v %% (%s)", web, db, *g.Utilization, g.UtilizationSource)
	sum := web + db
	if sum < 30 || web/sum*100 < 33.33-15 || web/sum*100 > 33.33+15 || db/sum*100 < 66.67-15 || db/sum*100 > 66.67+15 {
		t.Errorf("web %.2f %%, db %.2f %%: want 33/67 of their sum (+-15 points)", web, db)
	}
	if g.UtilizationSource != stat.SourceScheduler || math.Abs(*g.Utilization-math.Min(sum, 100)) > 0.02 {
		t.Errorf("GPU 0: %v from %q, want the instances' sum %.2f", *g.Utilization, g.UtilizationSource, sum)
	}
	// The tests after this one find the GPU idle: a whole second without a slice.
	time.Sleep(2100 * time.Millisecond)
}

// Every field of the document against the tree (read here through pkg/procfs), the
// node's inventory and Docker's own inspect output.
func TestStatMatchesTreeAndDocker(t *testing.T) {
	fixture(t)
	before := time.Now()
	s := statJSON(t)
	n := openNode(t)
	st, err := n.Tree.Read()
	if err != nil {
		t.Fatal(err)
	}
	if s.Root != n.Tree.Root() || s.Kernel != n.Tree.Kernel() || !s.Simulated || s.DefaultMemsize != st.DefaultMemsize ||
		s.DockerError != "" || s.Time.Before(before.Add(-time.Second)) || s.Time.After(time.Now()) || len(s.GPUs) != len(st.GPUs) {
		t.Fatalf("node: %+v", s)
	}
	docker := map[string]container{fx.web.ID[:12]: fx.web, fx.db.ID[:12]: fx.db}
	pids := map[string]map[int]int{fx.web.ID[:12] + "/0": {fx.webPID: 512 << 20}, fx.db.ID[:12] + "/1": {fx.dbPID: 3 << 29}}
	// Policy 1 with db high priority (prio_ratio 30): the other instance gets 0.7 x 1/2
	// when both are busy and all of the GPU alone, db 0.3 + 0.7 x 1/2 or all of it.
	compute := map[string][2]float64{fx.web.ID[:12]: {35, 100}, fx.db.ID[:12]: {65, 100}, orphan: {35, 100}}
	for i, g := range s.GPUs {
		tg, inv := st.GPUs[i], n.GPUs[i]
		given, used := uint64(0), uint64(0)
		for _, in := range tg.Instances {
			given += in.Memsize
		}
		if g.Index != tg.Index || g.UUID != gpu.SimUUID(g.Index) || g.UUID != inv.UUID || g.Name != inv.Name ||
			g.Policy != tg.Policy || g.PolicyName != "preemptive" || g.MaxInst != tg.MaxInst || g.FreeWeight != tg.FreeWeight ||
			g.PrioRatio != tg.PrioRatio || g.MemoryTotal != inv.MemoryBytes || g.MemoryGiven != given ||
			!idleUtil(s, g.Utilization, g.UtilizationSource) || len(g.Instances) != len(tg.Instances) {
			t.Errorf("GPU %d: %+v\ntree %+v inventory %+v", i, g, tg, inv)
			continue
		}
		for j, in := range g.Instances {
			ti := tg.Instances[j]
			mi, err := procfs.ReadMeminfo(n.Tree.Root(), g.Index, ti.ID)
			if err != nil {
				t.Fatal(err)
			}
			used += mi.Held()
			procs := map[int]int{}
			for _, p := range in.Processes {
				procs[p.PID] = int(p.Used)
			}
			want := pids[ti.ID+"/"+fmt.Sprint(g.Index)]
			if want == nil {
				want = map[int]int{}
			}
			c, known := docker[ti.ID]
			if in.GPU != g.Index || in.ID != ti.ID || in.Memsize != ti.Memsize || in.Weight != ti.Weight || in.HighPrio != ti.HighPrio ||
				in.Used != mi.Held() || in.Free != mi.Free || fmt.Sprint(procs) != fmt.Sprint(want) ||
				!idleUtil(s, in.Utilization, in.UtilizationSource) || (in.Sched != nil) != s.Kernel ||
				*in.ComputeShare != compute[ti.ID][0] || *in.ComputeLimit != compute[ti.ID][1] {
				t.Errorf("GPU %d instance %s: %+v\ntree %+v meminfo %+v, want processes %v", g.Index, ti.ID, in, ti, mi, want)
			}
			switch {
			case known && (in.Container == nil || *in.Container != stat.Container{ID: c.ID, Name: c.Name, State: c.State.Status} || in.Orphan):
				t.Errorf("%s: container %+v orphan %v, want %s %s %s", ti.ID, in.Container, in.Orphan, c.ID, c.Name, c.State.Status)
			case !known && (ti.ID != orphan || in.Container != nil || !in.Orphan):
				t.Errorf("%s: container %+v orphan %v, want the fixture's orphan", ti.ID, in.Container, in.Orphan)
			}
		}
		if g.MemoryUsed != used {
			t.Errorf("GPU %d: memory used %d, the instances' meminfo %d", g.Index, g.MemoryUsed, used)
		}
	}
}

// Each policy's compute figures for web (weight 1) and db (weight 2, high priority) on
// GPU 0, max_inst 8, prio_ratio 30 (docs/scheduler.md's rules, worked by hand).
func TestComputePerPolicy(t *testing.T) {
	fixture(t)
	must(t, "cgpu", "set", "--gpu", "0", "--max-inst", "8")
	for p, want := range map[string][4]*float64{
		"fair-share": {pf(8.75), pf(12.5), pf(38.75), pf(38.75)},
		"preemptive": {pf(35), pf(100), pf(65), pf(100)},
		"weight":     {pf(23.33), pf(100), pf(76.67), pf(76.67)},
		"fixed":      {pf(8.75), pf(12.5), pf(47.5), pf(47.5)},
		"soft":       {pf(23.33), pf(100), pf(76.67), pf(100)},
		"native":     {nil, nil, nil, nil},
	} {
		must(t, "cgpu", "set", "--gpu", "0", "--policy", p)
		s := statJSON(t, "--gpu", "0")
		var got [4]*float64
		for _, in := range s.GPUs[0].Instances {
			k := 0
			if in.ID == fx.db.ID[:12] {
				k = 2
			}
			got[k], got[k+1] = in.ComputeShare, in.ComputeLimit
		}
		if show(got) != show(want) || s.GPUs[0].PolicyName != p {
			t.Errorf("%s (%s): web share, limit, db share, limit = %s, want %s", p, s.GPUs[0].PolicyName, show(got), show(want))
		}
	}
}

func show(v [4]*float64) string {
	var s []string
	for _, p := range v {
		if p == nil {
			s = append(s, "-")
		} else {
			s = append(s, fmt.Sprint(*p))
		}
	}
	return strings.Join(s, " ")
}

func lines(s string) []string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	sort.Strings(l)
	return l
}

func TestTemplatesTablesFilters(t *testing.T) {
	fixture(t)
	row := "{{.Name}}|{{.GPU}}|{{.Weight}}|{{.HighPrio}}|{{.Procs}}|{{.State}}|{{.Compute}}|{{.Util}}"
	want := []string{"<orphan>|1|1|false|0|orphan|35%..100%|-", "db|0|2|true|0|running|65%..100%|-",
		"db|1|2|true|1|running|65%..100%|-", "web|0|1|false|1|running|35%..100%|-"}
	if got := lines(must(t, "cgpu", "stat", "--format", row)); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := lines(must(t, "cgpu", "stat", "--format", "{{.ID}}", "--no-trunc", "web")); len(got) != 1 || got[0] != fx.web.ID {
		t.Errorf("--no-trunc: %q", got)
	}
	if got := must(t, "cgpu", "stat", "--format", "table {{.Name}}\t{{.MemUsage}}", "web"); got != "NAME      MEM USAGE / LIMIT\nweb       512MiB / 1.967GiB\n" {
		t.Errorf("table template: %q", got)
	}
	var r map[string]string
	if err := json.Unmarshal([]byte(must(t, "cgpu", "stat", "--format", "{{json .}}", "web")), &r); err != nil || r["Name"] != "web" || r["MemPerc"] != "25.42%" {
		t.Errorf("{{json .}}: %v %v", r, err)
	}
	table := must(t, "cgpu", "stat")
	for _, want := range []string{
		"GPU       NAME       POLICY         MAX INST   FREE WEIGHT   PRIO RATIO   MEM GIVEN / TOTAL",
		"0         Tesla T4   1 preemptive   16         13            30%          4.918GiB / 14.75GiB   512MiB",
		"1         Tesla T4   1 preemptive   16         13            30%          3.951GiB / 14.75GiB   1.5GiB",
		fx.web.ID[:12] + "   web        0         512MiB / 1.967GiB   25.42%    1         1         false       35%..100%",
		"orphan " + orphan + " on GPU 1: no container has this ID (its runtime delete never ran); remove it with: docker cgpu set --remove-orphan " + orphan,
	} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}
	if got := lines(must(t, "cgpu", "stat", "--format", "{{.Name}}|{{.GPU}}", "db")); strings.Join(got, " ") != "db|0 db|1" {
		t.Errorf("CONTAINER filter: %q", got)
	}
	if got := lines(must(t, "cgpu", "stat", "--format", "{{.Name}}|{{.GPU}}", "--gpu", "1")); strings.Join(got, " ") != "<orphan>|1 db|1" {
		t.Errorf("--gpu filter: %q", got)
	}
	if got := lines(must(t, "cgpu", "stat", "--format", "{{.Name}}", fx.db.ID[:5], orphan[:6])); strings.Join(got, " ") != "<orphan> db db" {
		t.Errorf("ID prefix filter: %q", got)
	}
	for args, want := range map[string]string{
		"plain":                 "cgpu: container \"plain\": no cgpu instance on the GPUs shown",
		"--gpu 7":               "cgpu: --gpu=7: unknown GPU 7; the cgpu tree has GPUs 0..1",
		"--format {{.Nope}}":    "template",
		"--interval 0s --watch": "cgpu: --interval 0s: must be above 0",
	} {
		r := docker(append([]string{"cgpu", "stat"}, strings.Fields(args)...)...)
		if r.code == 0 || !strings.Contains(r.err, want) || strings.Count(strings.TrimSpace(r.err), "\n") != 0 {
			t.Errorf("stat %s: exit %d %q, want one line with %q", args, r.code, r.err, want)
		}
	}
}

func checkScrape(t *testing.T, m map[string]float64) {
	t.Helper()
	web := fmt.Sprintf("{container=web,gpu=0,id=%s}", fx.web.ID[:12])
	db1 := fmt.Sprintf("{container=db,gpu=1,id=%s}", fx.db.ID[:12])
	for k, v := range map[string]float64{
		"cgpu_up{}": 1, "cgpu_docker_up{}": 1, "cgpu_gpu_free_weight{gpu=1}": 13, "cgpu_gpu_memory_used_bytes{gpu=1}": 3 << 29,
		"cgpu_instance_memory_used_bytes" + web: 512 << 20, "cgpu_instance_memory_limit_bytes" + web: float64(gib2),
		"cgpu_instance_weight" + db1: 2, "cgpu_instance_high_priority" + db1: 1, "cgpu_instance_compute_share_ratio" + db1: 0.65,
		"cgpu_instance_orphan{container=,gpu=1,id=" + orphan + "}": 1,
	} {
		if got, ok := m[k]; !ok || got != v {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, v)
		}
	}
	if _, ok := m["cgpu_instance_utilization_ratio"+web]; ok {
		t.Error("utilisation exported though nothing measures it here")
	}
}

func TestPrometheus(t *testing.T) {
	fixture(t)
	checkScrape(t, metricstest.Parse(t, strings.NewReader(must(t, "cgpu", "stat", "--prometheus"))))

	// The exporter, through the docker client, in a process group of its own as a shell
	// job or a service is: Ctrl-C (or systemd's stop) signals the whole group, the
	// exporter stops cleanly and the client returns its status.
	cmd := exec.Command(dockerBin(), "cgpu", "stat", "--listen", "127.0.0.1:0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	var url string
	for sc.Scan() {
		if _, rest, ok := strings.Cut(sc.Text(), "serving Prometheus metrics on "); ok {
			url, _, _ = strings.Cut(rest, " ")
			break
		}
	}
	if url == "" {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.Fatalf("no address announced: %v", cmd.Wait())
	}
	go io.Copy(io.Discard, stderr)
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	checkScrape(t, metricstest.Parse(t, resp.Body))
	resp.Body.Close()
	// A change shows in the next scrape: every scrape reads the node afresh.
	must(t, "cgpu", "set", "web", "--weight", "4")
	resp, err = http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	if m := metricstest.Parse(t, resp.Body); m[fmt.Sprintf("cgpu_instance_weight{container=web,gpu=0,id=%s}", fx.web.ID[:12])] != 4 {
		t.Errorf("the second scrape did not see the new weight")
	}
	resp.Body.Close()
	syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Errorf("the exporter did not stop cleanly on SIGINT: %v", err)
	}
}
