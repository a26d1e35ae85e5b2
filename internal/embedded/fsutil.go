package embedded

import (
	"fmt"
	"os"
	"path/filepath"
)

// writeFileAtomic makes an acknowledged write durable: the bytes go to a
// temporary file in the same directory, are fsynced, renamed over the target,
// and the directory is fsynced so the rename itself survives a crash.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("create temp for %s: %w", path, err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Chmod(perm); err != nil {
		return fmt.Errorf("chmod %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename into %s: %w", path, err)
	}
	ok = true
	return syncDir(dir)
}

// historyDir returns a fresh history/<timestamp>-delete folder for removed
// content of a notebook, as SiYuan keeps them; removals within one second
// that would collide get a numbered sibling.
func (k *Kernel) historyDir(box string) string {
	base := filepath.Join(k.dir, "history", nowStamp()+"-delete")
	dir := base
	for n := 1; ; n++ {
		if _, err := os.Stat(filepath.Join(dir, box)); os.IsNotExist(err) {
			return dir
		}
		dir = fmt.Sprintf("%s-%d", base, n)
	}
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open dir %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync dir %s: %w", dir, err)
	}
	return nil
}
