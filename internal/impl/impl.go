// Package impl is the registry of a core's implementations (generic code and
// the assembly kernels): which ones this CPU can run, which one is in use,
// and a hook that lets tests force each of them in turn.
//
// A core keeps one Registry, registers its kernels from init, and dispatches
// with a switch on [Registry.Active] — a switch of direct calls rather than
// a function value, so escape analysis can see that kernels keep no
// pointers and callers may pass stack memory.
package impl

import "fmt"

// ID identifies one implementation within a core. Generic (0) is always
// present and always supported.
type ID uint8

// Generic is the ID of the pure-Go reference implementation.
const Generic ID = 0

// Registry lists a core's implementations. It is written only during
// package initialisation and by tests through Use.
type Registry struct {
	pkg       string
	names     []string // indexed by ID
	supported []bool   // indexed by ID
	active    ID
}

// New returns a registry for package pkg (used in error messages) holding
// only the generic implementation.
func New(pkg string) *Registry {
	return &Registry{pkg: pkg, names: []string{"generic"}, supported: []bool{true}}
}

// Register adds implementation id, named name, which this CPU can run if
// supported. IDs are registered in increasing order, worst to best, and the
// best supported one becomes active.
func (r *Registry) Register(id ID, name string, supported bool) {
	if int(id) != len(r.names) {
		panic(fmt.Sprintf("%s: kernel %q registered out of order", r.pkg, name))
	}
	r.names = append(r.names, name)
	r.supported = append(r.supported, supported)
	if supported {
		r.active = id
	}
}

// Active is the implementation in use.
func (r *Registry) Active() ID { return r.active }

// Name names the implementation in use.
func (r *Registry) Name() string { return r.names[r.active] }

// Names lists the implementations this CPU can run, best first, ending with
// "generic".
func (r *Registry) Names() []string {
	var names []string
	for id := len(r.names) - 1; id >= 0; id-- {
		if r.supported[id] {
			names = append(names, r.names[id])
		}
	}
	return names
}

// Use makes the named implementation active until the returned function
// restores the previous one. It is for tests, and is not safe while other
// goroutines use the core.
func (r *Registry) Use(name string) (restore func(), err error) {
	for id, n := range r.names {
		if n != name {
			continue
		}
		if !r.supported[id] {
			return nil, fmt.Errorf("%s: kernel %q is not supported on this CPU", r.pkg, name)
		}
		prev := r.active
		r.active = ID(id)
		return func() { r.active = prev }, nil
	}
	return nil, fmt.Errorf("%s: no kernel named %q", r.pkg, name)
}
