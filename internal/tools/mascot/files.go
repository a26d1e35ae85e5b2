package mascot

import (
	"bytes"
	"context"
	"errors"
	"io"

	"github.com/sisyphus-go/sisyphus/internal/mascotstore"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// maxMascotFile bounds what is read of one of the mascot's files: the
// analytics file rotates at 2 MiB, the others are a few hundred bytes.
const maxMascotFile = mascotstore.MaxAnalyticsBytes + 1<<20

// KernelFiles are the mascot's files through the kernel's getFile and
// putFile. Only the server uses them: the folder is Protected from every
// agent's path.
type KernelFiles struct{ Kernel *siyuan.Client }

// Read implements mascotstore.Files.
func (k KernelFiles) Read(ctx context.Context, path string) ([]byte, bool, error) {
	rc, _, err := k.Kernel.GetFile(ctx, path)
	if errors.Is(err, siyuan.ErrFileNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, maxMascotFile))
	if err != nil {
		return nil, false, err
	}
	return data, true, nil
}

// Write implements mascotstore.Files.
func (k KernelFiles) Write(ctx context.Context, path string, data []byte) error {
	return k.Kernel.PutFile(ctx, siyuan.PutFileRequest{Path: path, Body: bytes.NewReader(data)})
}
