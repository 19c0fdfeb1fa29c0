// Package shapes is a fixture for the Go tags query.
package shapes

import "math"

// Pi is re-exported.
const Pi = math.Pi

var registry = map[string]Shape{}

// Shape is anything with an area.
type Shape interface {
	Area() float64
}

type Circle struct {
	R float64
}

type Set[T comparable] struct{ m map[T]struct{} }

type Celsius float64

func (c *Circle) Area() float64 {
	return Pi * c.R * c.R
}

func (s *Set[T]) Add(v T) { s.m[v] = struct{}{} }

func NewCircle(r float64) *Circle {
	c := &Circle{R: r}
	Register("circle", c)
	return c
}

func Register(name string, s Shape) {
	registry[name] = s
}
