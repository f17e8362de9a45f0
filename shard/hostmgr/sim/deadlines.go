package sim

// deadlines is a min-heap of running runs ordered by when they end. Each
// run knows its index, so a killed or lost run leaves the heap at once.
type deadlines []*simRun

func (h deadlines) less(i, j int) bool { return h[i].due < h[j].due }

func (h deadlines) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIndex = i
	h[j].heapIndex = j
}

func (h *deadlines) push(r *simRun) {
	r.heapIndex = len(*h)
	*h = append(*h, r)
	h.up(r.heapIndex)
}

// peek returns the run that ends first, or nil.
func (h deadlines) peek() *simRun {
	if len(h) == 0 {
		return nil
	}
	return h[0]
}

// remove takes r out of the heap; r must be in it.
func (h *deadlines) remove(r *simRun) {
	i := r.heapIndex
	last := len(*h) - 1
	if i != last {
		h.swap(i, last)
	}
	(*h)[last] = nil
	*h = (*h)[:last]
	r.heapIndex = -1
	if i != last {
		h.down(i)
		h.up(i)
	}
}

func (h deadlines) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !h.less(i, parent) {
			return
		}
		h.swap(i, parent)
		i = parent
	}
}

func (h deadlines) down(i int) {
	n := len(h)
	for {
		smallest := i
		if l := 2*i + 1; l < n && h.less(l, smallest) {
			smallest = l
		}
		if r := 2*i + 2; r < n && h.less(r, smallest) {
			smallest = r
		}
		if smallest == i {
			return
		}
		h.swap(i, smallest)
		i = smallest
	}
}
