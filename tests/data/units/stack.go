package collections

// Stack holds items last in, first out.
type Stack struct {
	items []int
}

// Sized knows its size.
type Sized interface {
	Len() int
}

// Push adds an item.
func (s *Stack) Push(item int) {
	s.items = append(s.items, item)
}

// Len counts the items.
func (s *Stack) Len() int {
	return len(s.items)
}

// NewStack makes an empty stack.
func NewStack() *Stack {
	return &Stack{}
}
