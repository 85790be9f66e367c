package admission

// minHeap is a binary min-heap under cmp, for taking the first few of many candidates in order.
type minHeap[T any] struct {
	items []T
	cmp   func(a, b T) int
}

// newHeap orders a copy of items.
func newHeap[T any](items []T, cmp func(a, b T) int) *minHeap[T] {
	h := &minHeap[T]{items: append([]T(nil), items...), cmp: cmp}
	for i := len(h.items)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
	return h
}

func (h *minHeap[T]) len() int { return len(h.items) }

// pop removes and returns the least item.
func (h *minHeap[T]) pop() T {
	top := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items = h.items[:last]
	h.down(0)
	return top
}

func (h *minHeap[T]) down(i int) {
	for {
		least := i
		for _, c := range []int{2*i + 1, 2*i + 2} {
			if c < len(h.items) && h.cmp(h.items[c], h.items[least]) < 0 {
				least = c
			}
		}
		if least == i {
			return
		}
		h.items[i], h.items[least] = h.items[least], h.items[i]
		i = least
	}
}
