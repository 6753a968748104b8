name: "relu_text"
op {
  input: "x"
  output: "y"
  type: "Relu"
}
external_input: "x"
external_output: "y"
