package guard

import (
	"io/fs"
	"path/filepath"

	"github.com/nodwyn/nodwyn/internal/fsview"
)

// walkTree walks the directory root depth first in lexical order, as
// filepath.WalkDir does, through fsys: visit is called for every entry
// below root and says whether to descend into it (a directory) and whether
// to stop the walk. Entries that cannot be listed are skipped. It reports
// whether the walk was stopped.
func walkTree(fsys fsview.FS, root string, visit func(p string, d fs.DirEntry) (descend, stop bool)) bool {
	ents, err := fsys.ReadDir(root)
	if err != nil {
		return false
	}
	for _, d := range ents {
		p := filepath.Join(root, d.Name())
		descend, stop := visit(p, d)
		if stop {
			return true
		}
		if descend && walkTree(fsys, p, visit) {
			return true
		}
	}
	return false
}
