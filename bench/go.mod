module github.com/nodwyn/nodwyn/bench

go 1.26.0

require (
	github.com/nodwyn/nodwyn v0.0.0
	github.com/yuin/gopher-lua v1.1.2
	go.starlark.net v0.0.0-20260908191801-89a6a09411d5
)

require golang.org/x/sys v0.50.0 // indirect

replace github.com/nodwyn/nodwyn => ../
