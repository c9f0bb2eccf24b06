;; A minimal guest in the text format: the ABI exports and `spin`, which never returns.
(module
  (memory (export "memory") 1)
  (func (export "guest_abi_version") (result i32) i32.const 2)
  (func (export "guest_alloc") (param i32) (result i32) i32.const 1024)
  (func (export "guest_free") (param i32 i32))
  (func (export "guest:spin") (param i32 i32 i32) (result i64)
    (loop $forever (br $forever))
    i64.const 0))
