// Package brew builds models the way Caffe2's brew and ModelHelper do: a
// Model holds a train net, the init net that creates its parameters and the
// record of those parameters (with Caffe2's names, shapes, tags and default
// initializers); helper functions add layers; optimizers add the update
// operators; training helpers run the loop.
package brew
