;; The exports of a version 1 guest: a callable took `(ptr, len)`, all JSON.
(module
  (memory (export "memory") 1)
  (func (export "guest_abi_version") (result i32) i32.const 1)
  (func (export "guest_alloc") (param i32) (result i32) i32.const 1024)
  (func (export "guest_free") (param i32 i32))
  (func (export "guest:hello") (param i32 i32) (result i64) i64.const 0))
