package corpora

import (
	"archive/zip"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The corpora in languages the first sets did not measure, all from
// Debian's packages (scripts/test.sh installs them):
//
//   - "java": the JDK 17's java.util (with its subpackages) and
//     java.net.http, extracted from openjdk-17-source's src.zip;
//   - "rust": Rust 1.63's standard library (rust-src), used in place;
//   - "linux": the kernel's kernel/sched and fs/ext4 with the scheduler's
//     headers, extracted from linux-source-6.1's tarball;
//   - "ruby": Ruby 3.1's standard library (libruby3.1), used in place.
const (
	jdkSrcZip   = "/usr/lib/jvm/openjdk-17/lib/src.zip"
	rustStd     = "/usr/src/rustc-1.63.0/library/std/src"
	linuxTarXZ  = "/usr/src/linux-source-6.1.tar.xz"
	rubyStdlib  = "/usr/lib/ruby/3.1.0"
	aptPackages = "openjdk-17-source rust-src linux-source-6.1 ruby3.1"
)

// jdkDirs are the parts of src.zip the "java" corpus holds.
var jdkDirs = []string{"java.base/java/util/", "java.net.http/java/net/http/", "java.net.http/jdk/internal/net/http/"}

// linuxDirs are the parts of the kernel tarball the "linux" corpus holds.
var linuxDirs = []string{"kernel/sched", "fs/ext4", "include/linux/sched", "include/linux/sched.h"}

func inPlace(dir, probe, pkg string) (string, error) {
	if _, err := os.Stat(filepath.Join(dir, probe)); err != nil {
		return "", fmt.Errorf("no %s at %s (apt-get install %s)", probe, dir, pkg)
	}
	return dir, nil
}

// cached fills a directory under the user's cache directory once with fill,
// renaming a complete copy into place so concurrent test binaries only ever
// see it whole (as python() does).
func cached(name string, fill func(dir string) error) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding the cache directory for the %s corpus: %w", name, err)
	}
	parent := filepath.Join(cache, "cairn-corpora")
	dst := filepath.Join(parent, name)
	if _, err := os.Stat(filepath.Join(dst, ".complete")); err == nil {
		return dst, nil
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", fmt.Errorf("creating %s: %w", parent, err)
	}
	tmp, err := os.MkdirTemp(parent, "."+name+"-*")
	if err != nil {
		return "", fmt.Errorf("extracting the %s corpus: %w", name, err)
	}
	defer os.RemoveAll(tmp)
	if err := fill(tmp); err != nil {
		return "", fmt.Errorf("extracting the %s corpus: %w", name, err)
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dst); err != nil {
		if _, statErr := os.Stat(filepath.Join(dst, ".complete")); statErr == nil {
			return dst, nil
		}
		return "", fmt.Errorf("putting the %s corpus in place: %w", name, err)
	}
	return dst, nil
}

func jdk() (string, error) {
	if _, err := os.Stat(jdkSrcZip); err != nil {
		return "", fmt.Errorf("no %s (apt-get install openjdk-17-source)", jdkSrcZip)
	}
	return cached("java-17", func(dir string) error {
		zr, err := zip.OpenReader(jdkSrcZip)
		if err != nil {
			return err
		}
		defer zr.Close()
		for _, f := range zr.File {
			if !strings.HasSuffix(f.Name, ".java") || !hasAnyPrefix(f.Name, jdkDirs) {
				continue
			}
			if err := extractZipFile(f, filepath.Join(dir, filepath.FromSlash(f.Name))); err != nil {
				return err
			}
		}
		return nil
	})
}

func extractZipFile(f *zip.File, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	r, err := f.Open()
	if err != nil {
		return err
	}
	defer r.Close()
	w, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func linux() (string, error) {
	if _, err := os.Stat(linuxTarXZ); err != nil {
		return "", fmt.Errorf("no %s (apt-get install linux-source-6.1)", linuxTarXZ)
	}
	return cached("linux-6.1", func(dir string) error {
		// tar (with xz) is on every machine of this kind; Go's standard
		// library has no xz reader.
		args := []string{"-xJf", linuxTarXZ, "-C", dir, "--strip-components=1"}
		for _, d := range linuxDirs {
			args = append(args, "linux-source-6.1/"+d)
		}
		if out, err := exec.Command("tar", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("tar %s: %w: %s", linuxTarXZ, err, out)
		}
		return nil
	})
}
