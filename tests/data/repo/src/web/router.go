package web

import "strings"

// Route maps a path prefix to a handler name.
type Route struct {
	Prefix  string
	Handler string
}

// Router picks the handler for a request path.
type Router struct {
	routes []Route
}

// Match returns the handler of the longest matching prefix.
func (r *Router) Match(path string) string {
	best := ""
	bestLen := -1
	for _, route := range r.routes {
		if strings.HasPrefix(path, route.Prefix) && len(route.Prefix) > bestLen {
			best = route.Handler
			bestLen = len(route.Prefix)
		}
	}
	return best
}
