//! Machine code built when a program loads (with Cranelift): what the
//! native parser and deparser share. One function per [`Code`], whose
//! parameters are 64-bit integers (pointers and lengths) and whose result
//! is a 32-bit integer.
//!
//! `P4SCOPE_NATIVE=0` in the environment turns native code off (the
//! interpreter alone), for comparing the two.
#![allow(unsafe_code)]

use cranelift_codegen::ir::{types, AbiParam, InstBuilder, MemFlagsData, Value};
use cranelift_codegen::isa::TargetFrontendConfig;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Linkage, Module};

/// Whether native code is wanted (`P4SCOPE_NATIVE` is not `0`).
pub fn enabled() -> bool {
    std::env::var("P4SCOPE_NATIVE").map(|v| v.trim() != "0").unwrap_or(true)
}

/// One compiled function and the memory that holds it.
pub struct Code {
    /// Freed when the code is dropped.
    module: Option<JITModule>,
    pub entry: *const u8,
}

// The code and the module are not changed after `compile`: calls from
// several threads only read them.
unsafe impl Send for Code {}
unsafe impl Sync for Code {}

impl Drop for Code {
    fn drop(&mut self) {
        if let Some(m) = self.module.take() {
            // SAFETY: `entry` dies with `self`; nothing runs the code now.
            unsafe { m.free_memory() };
        }
    }
}

/// Builds a function of `params` 64-bit parameters returning a 32-bit
/// integer: `build` gets the builder, positioned in the entry block, and
/// the parameters, and must fill and seal every block it makes and call
/// `finalize`. None where the host has no Cranelift back end or is not
/// 64-bit, or where Cranelift fails, even by panicking (say, a host that
/// refuses executable memory): the interpreter then runs the program.
pub fn compile(params: usize, build: impl FnOnce(FunctionBuilder, &[Value], TargetFrontendConfig)) -> Option<Code> {
    let guarded = std::panic::AssertUnwindSafe(move || compile_unguarded(params, build));
    std::panic::catch_unwind(guarded).ok().flatten()
}

fn compile_unguarded(params: usize, build: impl FnOnce(FunctionBuilder, &[Value], TargetFrontendConfig)) -> Option<Code> {
    let mut flags = settings::builder();
    flags.set("opt_level", "speed").ok()?;
    let isa = cranelift_native::builder().ok()?.finish(settings::Flags::new(flags)).ok()?;
    if isa.pointer_type() != types::I64 {
        return None;
    }
    let mut module = JITModule::new(JITBuilder::with_isa(isa, default_libcall_names()));
    let mut ctx = module.make_context();
    for _ in 0..params {
        ctx.func.signature.params.push(AbiParam::new(types::I64));
    }
    ctx.func.signature.returns.push(AbiParam::new(types::I32));
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let args = b.block_params(entry).to_vec();
    build(b, &args, module.target_config());
    let id = module.declare_function("p4scope_native", Linkage::Local, &ctx.func.signature).ok()?;
    module.define_function(id, &mut ctx).ok()?;
    module.clear_context(&mut ctx);
    module.finalize_definitions().ok()?;
    let entry = module.get_finalized_function(id);
    Some(Code { module: Some(module), entry })
}

/// Flags of a load or store of packet bytes: in bounds (the code checks
/// first), at any alignment.
pub fn packet_bytes() -> MemFlagsData {
    MemFlagsData::new().with_notrap()
}

/// Flags of a load or store of a PHV slot: in bounds and aligned.
pub fn phv_slot() -> MemFlagsData {
    MemFlagsData::trusted()
}

/// The low 64 bits of PHV slot `field` (a u128, little-endian).
pub fn load_slot(b: &mut FunctionBuilder, vals: Value, field: u32) -> Value {
    b.ins().load(types::I64, phv_slot(), vals, (field * 16) as i32)
}

/// Writes `v` (64 bits) into PHV slot `field`, its high half zero.
pub fn store_slot(b: &mut FunctionBuilder, vals: Value, field: u32, v: Value) {
    let zero = b.ins().iconst(types::I64, 0);
    b.ins().store(phv_slot(), v, vals, (field * 16) as i32);
    b.ins().store(phv_slot(), zero, vals, (field * 16 + 8) as i32);
}

/// Whether every PHV slot of `fields` fields has a 32-bit offset.
pub fn slots_addressable(fields: usize) -> bool {
    (fields as u64 + 1) * 16 <= i32::MAX as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_function_returning_a_constant_runs() {
        let code = compile(1, |mut b, _, target| {
            let v = b.ins().iconst(types::I32, 7);
            b.ins().return_(&[v]);
            b.seal_all_blocks();
            b.finalize(target);
        })
        .expect("this host has a back end");
        // SAFETY: built with one 64-bit parameter and a 32-bit result.
        let f = unsafe { std::mem::transmute::<*const u8, extern "C" fn(u64) -> u32>(code.entry) };
        assert_eq!(f(0), 7);
    }

    #[test]
    fn a_translation_that_panics_gives_none() {
        assert!(compile(1, |_, _, _| panic!("a bug in a translation")).is_none());
    }
}
