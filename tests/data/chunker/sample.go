// Package sample is a fixture for the chunker tests.
package sample

import (
	"fmt"
	"strings"
)

// MaxItems is the largest stack size.
const MaxItems = 100

var registry = map[string]int{}

// Stack is a generic stack.
type Stack[T any] struct {
	items []T
	limit int
}

// Shape has an area.
type Shape interface {
	Area() float64
}

type ID = string

// NewStack builds an empty stack.
func NewStack[T any](limit int) *Stack[T] {
	return &Stack[T]{limit: limit}
}

// Push adds an item.
func (s *Stack[T]) Push(item T) error {
	if len(s.items) >= s.limit {
		return fmt.Errorf("stack full: %d", s.limit)
	}
	s.items = append(s.items, item)
	return nil
}

func Join(parts []string) string {
	upper := func(s string) string { return strings.ToUpper(s) }
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		out = append(out, upper(p))
	}
	return strings.Join(out, ",")
}

func TestPush(t *testing.T) {
	s := NewStack[int](1)
	if err := s.Push(1); err != nil {
		t.Fatal(err)
	}
}
