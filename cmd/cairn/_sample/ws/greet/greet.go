// Package greet builds greetings.
package greet

import "strings"

// Greet returns a greeting for name.
func Greet(name string) string {
	return "Hello, " + strings.TrimSpace(name) + "!"
}

// Shout returns the greeting in capitals.
func Shout(name string) string {
	return strings.ToUpper(Greet(name))
}
