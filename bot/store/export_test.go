package store

import (
	"context"
	"io/fs"
)

// OpenWith is Open with another migration set, so that tests can add steps.
func OpenWith(ctx context.Context, path string, migrations fs.FS, schema ...string) (*DB, error) {
	return open(ctx, path, migrations, schema)
}
