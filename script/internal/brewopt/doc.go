// Package brewopt reads the keywords of brew helper calls (and of
// model_helper.ModelHelper's arg_scope) as package brew's options.
package brewopt
