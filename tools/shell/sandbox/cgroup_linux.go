//go:build linux

package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// cgroupRoot is where the cgroup file systems are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// cgroup is one command's control group: a directory per hierarchy (v1:
// pids and memory; v2: one), created below the server's own group.
type cgroup struct {
	version int
	dirs    []string
}

var cgroupSeq atomic.Int64

// ownCgroups reads /proc/self/cgroup: controller list (v1) or "" (v2) to
// path.
func ownCgroups() (map[string]string, error) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out, sc.Err()
}

// newCgroup creates a group with limits l: cgroup v2 where the server's
// group delegates pids and memory to children, else v1's pids and memory
// hierarchies where they are mounted and writable. The error says why
// neither could be used.
func newCgroup(l Limits) (*cgroup, error) {
	l = l.WithDefaults()
	own, err := ownCgroups()
	if err != nil {
		return nil, fmt.Errorf("reading the server's cgroups: %w", err)
	}
	name := fmt.Sprintf("cairn-cmd-%d-%d", os.Getpid(), cgroupSeq.Add(1))
	var errs []error
	if p, ok := own[""]; ok {
		g, err := newCgroupV2(l, p, name)
		if err == nil {
			return g, nil
		}
		errs = append(errs, fmt.Errorf("cgroup v2: %w", err))
	}
	g, err := newCgroupV1(l, own, name)
	if err == nil {
		return g, nil
	}
	errs = append(errs, fmt.Errorf("cgroup v1: %w", err))
	return nil, errors.Join(errs...)
}

func newCgroupV2(l Limits, own, name string) (*cgroup, error) {
	base := cgroupRoot
	if _, err := os.Stat(filepath.Join(base, "cgroup.controllers")); err != nil {
		base = filepath.Join(cgroupRoot, "unified")
	}
	parent := filepath.Join(base, own)
	ctl, err := os.ReadFile(filepath.Join(parent, "cgroup.subtree_control"))
	if err != nil {
		return nil, err
	}
	have := strings.Fields(string(ctl))
	for _, want := range []string{"pids", "memory"} {
		if !contains(have, want) {
			return nil, fmt.Errorf("%s does not delegate the %s controller (subtree_control: %q)", parent, want, strings.TrimSpace(string(ctl)))
		}
	}
	dir := filepath.Join(parent, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	g := &cgroup{version: 2, dirs: []string{dir}}
	mem := strconv.FormatInt(int64(l.MemoryMB)<<20, 10)
	for file, v := range map[string]string{"pids.max": strconv.Itoa(l.Pids), "memory.max": mem, "memory.swap.max": "0"} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(v), 0); err != nil && file != "memory.swap.max" {
			g.remove()
			return nil, fmt.Errorf("setting %s: %w", file, err)
		}
	}
	return g, nil
}

func newCgroupV1(l Limits, own map[string]string, name string) (*cgroup, error) {
	g := &cgroup{version: 1}
	for _, ctl := range []string{"pids", "memory"} {
		p, ok := own[ctl]
		if !ok {
			g.remove()
			return nil, fmt.Errorf("no %s hierarchy", ctl)
		}
		dir := filepath.Join(cgroupRoot, ctl, p, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			g.remove()
			return nil, err
		}
		g.dirs = append(g.dirs, dir)
		var sets [][2]string
		if ctl == "pids" {
			sets = [][2]string{{"pids.max", strconv.Itoa(l.Pids)}}
		} else {
			mem := strconv.FormatInt(int64(l.MemoryMB)<<20, 10)
			sets = [][2]string{{"memory.limit_in_bytes", mem}, {"memory.memsw.limit_in_bytes", mem}}
		}
		for _, kv := range sets {
			f := filepath.Join(dir, kv[0])
			if _, err := os.Stat(f); err != nil && kv[0] == "memory.memsw.limit_in_bytes" {
				continue // no swap accounting in this kernel
			}
			if err := os.WriteFile(f, []byte(kv[1]), 0); err != nil {
				g.remove()
				return nil, fmt.Errorf("setting %s: %w", f, err)
			}
		}
	}
	return g, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// add moves process pid (all its threads) into the group.
func (g *cgroup) add(pid int) error {
	for _, d := range g.dirs {
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			return fmt.Errorf("moving the launcher into %s: %w", d, err)
		}
	}
	return nil
}

// procs lists the processes in the group.
func (g *cgroup) procs() []int {
	b, err := os.ReadFile(filepath.Join(g.dirs[0], "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// kill kills every process in the group (a fork racing the kill is
// caught by the next round) and waits until it is empty.
func (g *cgroup) kill() {
	if g.version == 2 {
		_ = os.WriteFile(filepath.Join(g.dirs[0], "cgroup.kill"), []byte("1"), 0)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		ps := g.procs()
		if len(ps) == 0 {
			return
		}
		for _, p := range ps {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// remove kills what is left and deletes the group.
func (g *cgroup) remove() {
	if g == nil {
		return
	}
	if len(g.dirs) > 0 {
		g.kill()
	}
	for _, d := range g.dirs {
		// A group empties a moment after its last process is reaped.
		for i := 0; i < 200; i++ {
			if err := os.Remove(d); err == nil || os.IsNotExist(err) {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// String names the cgroup version for Describe.
func (g *cgroup) String() string { return "cgroup v" + strconv.Itoa(g.version) }

// removeStale deletes the command cgroups a server that is gone left
// behind (killed before it could remove them), killing what is in them.
func removeStale() {
	own, err := ownCgroups()
	if err != nil {
		return
	}
	var parents []string
	for ctl, p := range own {
		switch ctl {
		case "":
			parents = append(parents, filepath.Join(cgroupRoot, p), filepath.Join(cgroupRoot, "unified", p))
		case "pids", "memory":
			parents = append(parents, filepath.Join(cgroupRoot, ctl, p))
		}
	}
	for _, parent := range parents {
		dirs, _ := filepath.Glob(filepath.Join(parent, "cairn-cmd-*"))
		for _, d := range dirs {
			f := strings.Split(filepath.Base(d), "-")
			if len(f) != 4 {
				continue
			}
			pid, err := strconv.Atoi(f[2])
			if err != nil || pid == os.Getpid() {
				continue
			}
			if _, err := os.Stat(filepath.Join("/proc", f[2])); err == nil {
				continue // its server still runs
			}
			(&cgroup{dirs: []string{d}}).remove()
		}
	}
}
