// Package roles is the one vocabulary of what a tool's parameter is to the
// guard. prim's table gives each of its tools' parameters a Role,
// define-tool names one in Scheme by the same words, and the guard judges a
// call by them (guard.Options.Tools, guard.ToolParam). It imports nothing,
// so prim and guard share it without knowing each other.
package roles

// Role is what a tool's parameter is to the guard: its value, a string,
// is the name Scheme writes (define-tool's params, nodwyn guard --tool).
type Role string

// The roles. A path parameter that is not required names the folder when
// a call leaves it out.
const (
	// None: the guard does not judge the parameter.
	None Role = ""
	// PathRead is a file or directory the tool reads (the denylist, the
	// repository pin).
	PathRead Role = "path-read"
	// PathSearch is a directory the tool walks, leaving out what the
	// denylist denies (prim.Options.Deny): it may start above a denied
	// directory, never inside one.
	PathSearch Role = "path-search"
	// PathWrite is a file the tool writes (also protected paths and
	// scratch writes).
	PathWrite Role = "path-write"
	// Command is a command line the tool runs (the argv trigger, the
	// secret scan, protected paths, standing approvals of a prefix).
	Command Role = "command"
	// Pattern is a glob matched below the tool's path.
	Pattern Role = "pattern"
	// Content is text the tool writes (the secret scan).
	Content Role = "content"
)

// All are the roles a parameter can have, None aside.
var All = []Role{PathRead, PathWrite, PathSearch, Command, Content, Pattern}

// Known reports whether r is None or one of All.
func (r Role) Known() bool {
	if r == None {
		return true
	}
	for _, k := range All {
		if r == k {
			return true
		}
	}
	return false
}

// IsPath reports whether r names a path: PathRead, PathSearch or
// PathWrite.
func (r Role) IsPath() bool { return r == PathRead || r == PathSearch || r == PathWrite }
