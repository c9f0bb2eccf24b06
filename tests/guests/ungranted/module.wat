;; Imports the LLM capability; its manifest grants nothing.
(module
  (import "host:llm" "call" (func $llm (param i32 i32 i32 i32) (result i64)))
  (memory (export "memory") 1)
  (func (export "guest_abi_version") (result i32) i32.const 2)
  (func (export "guest_alloc") (param i32) (result i32) i32.const 1024)
  (func (export "guest_free") (param i32 i32))
  (func (export "guest:ask") (param i32 i32 i32) (result i64)
    (call $llm (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0))))
