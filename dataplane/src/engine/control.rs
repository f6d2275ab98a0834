//! The engine's control API: tables, counters, registers, meters, value
//! sets, mirroring — by the names of the BMv2 JSON. Never used per packet.

use super::{EngineError, Switch};
use crate::program::*;
use crate::tables::TableError;
use crate::value::Val;
use std::collections::HashMap;

impl Switch {
    // ----- control API ---------------------------------------------------

    pub fn table_id(&self, name: &str) -> Result<u32, EngineError> {
        if let Some(t) = self.prog.names.tables.get(name) {
            return Ok(*t);
        }
        // p4c-style suffix match ("t" for "ingress.t"), if unambiguous
        let mut found = None;
        for (n, t) in &self.prog.names.tables {
            if n.ends_with(&format!(".{name}")) {
                if found.is_some() {
                    return Err(EngineError::Invalid(format!("table name '{name}' is ambiguous")));
                }
                found = Some(*t);
            }
        }
        found.ok_or_else(|| EngineError::UnknownName { kind: "table", name: name.to_string() })
    }

    pub fn action_id(&self, table: u32, name: &str) -> Result<u32, EngineError> {
        let t = &self.prog.tables[table as usize];
        let mut found = None;
        for a in &t.actions {
            let an = &self.prog.actions[*a as usize].name;
            if an == name {
                return Ok(*a);
            }
            if an.ends_with(&format!(".{name}")) || (found.is_none() && an.ends_with(name) && name.contains('.')) {
                found = Some(*a);
            }
        }
        found.ok_or_else(|| EngineError::Table { table: t.name.clone(), err: TableError::ActionNotInTable(name.to_string()) })
    }

    pub(crate) fn action_data(&self, table: u32, action: u32, args: &[Val]) -> Result<Vec<Val>, EngineError> {
        let a = &self.prog.actions[action as usize];
        if args.len() != a.params.len() {
            return Err(EngineError::Table {
                table: self.prog.tables[table as usize].name.clone(),
                err: TableError::WrongArgCount { action: a.name.clone(), expected: a.params.len(), found: args.len() },
            });
        }
        Ok(args.iter().zip(&a.params).map(|(v, p)| v.trunc(p.width)).collect())
    }

    pub fn table_add(
        &mut self,
        table: &str,
        key: &[MatchValue],
        action: &str,
        args: &[Val],
        priority: i32,
    ) -> Result<u32, EngineError> {
        // Indirect (action profile) tables take direct entries here: the
        // switch layer resolves members and groups into (action, data).
        let t = self.table_id(table)?;
        let a = self.action_id(t, action)?;
        self.table_add_ids(t, a, key, args, priority)
    }

    /// `table_add` of a table and action given by their ids (`table_id`, `action_id`).
    pub fn table_add_ids(&mut self, t: u32, a: u32, key: &[MatchValue], args: &[Val], priority: i32) -> Result<u32, EngineError> {
        let data = self.action_data(t, a, args)?;
        let td = &self.prog.tables[t as usize];
        let h = self.rt.tables[t as usize]
            .add(td, key, priority, a, data)
            .map_err(|err| EngineError::Table { table: td.name.clone(), err })?;
        // the idle-timeout clock starts at insertion, as BMv2's does
        let now = self.now_ns();
        if let Some(e) = self.rt.tables[t as usize].entries[h as usize].as_mut() {
            e.last_hit_ns = now;
        }
        Ok(h)
    }

    pub fn table_modify(&mut self, table: &str, handle: u32, action: &str, args: &[Val]) -> Result<(), EngineError> {
        let t = self.table_id(table)?;
        let a = self.action_id(t, action)?;
        let data = self.action_data(t, a, args)?;
        let name = self.prog.tables[t as usize].name.clone();
        self.rt.tables[t as usize].modify(handle, a, data).map_err(|err| EngineError::Table { table: name, err })
    }

    pub fn table_delete(&mut self, table: &str, handle: u32) -> Result<(), EngineError> {
        let t = self.table_id(table)?;
        let td = &self.prog.tables[t as usize];
        self.rt.tables[t as usize].delete(td, handle).map_err(|err| EngineError::Table { table: td.name.clone(), err })
    }

    pub fn table_clear(&mut self, table: &str) -> Result<(), EngineError> {
        let t = self.table_id(table)?;
        self.rt.tables[t as usize].clear();
        Ok(())
    }

    /// Removes every entry of every table (STF `remove all`).
    pub fn clear_all_tables(&mut self) {
        for t in &mut self.rt.tables {
            t.clear();
        }
    }

    pub fn table_set_default(&mut self, table: &str, action: &str, args: &[Val]) -> Result<(), EngineError> {
        let t = self.table_id(table)?;
        let a = self.action_id(t, action)?;
        let data = self.action_data(t, a, args)?;
        let td = &self.prog.tables[t as usize];
        if let Some(d) = &td.default {
            if d.action_const && d.action != a {
                return Err(EngineError::Table { table: td.name.clone(), err: TableError::ConstDefault });
            }
        }
        let st = &mut self.rt.tables[t as usize];
        st.default_action = Some(a);
        st.default_data = data;
        Ok(())
    }

    pub fn table_entry_count(&mut self, table: &str) -> Result<usize, EngineError> {
        let t = self.table_id(table)?;
        Ok(self.rt.tables[t as usize].len())
    }

    /// Direct counter of an entry: (bytes, packets).
    pub fn direct_counter(&self, table: &str, handle: u32) -> Result<(u64, u64), EngineError> {
        let t = self.table_id(table)?;
        match self.rt.tables[t as usize].entries.get(handle as usize).and_then(|e| e.as_ref()) {
            Some(e) => Ok((e.counter.bytes, e.counter.packets)),
            None => Err(EngineError::Table {
                table: self.prog.tables[t as usize].name.clone(),
                err: TableError::NoSuchEntry(handle),
            }),
        }
    }

    /// Sets an entry's direct counter (P4Runtime's counter_data, BMv2's
    /// `bm_mt_write_counter`).
    pub fn direct_counter_write(&mut self, table: &str, handle: u32, bytes: u64, packets: u64) -> Result<(), EngineError> {
        let e = self.entry_mut(table, handle)?;
        e.counter.bytes = bytes;
        e.counter.packets = packets;
        Ok(())
    }

    /// Sets the rates of an entry's direct meter: [(committed units per us,
    /// burst), (peak units per us, burst)], as `meter_set_rates` takes them.
    pub fn direct_meter_set_rates(&mut self, table: &str, handle: u32, rates: [(f64, u64); 2]) -> Result<(), EngineError> {
        let t = self.table_id(table)?;
        if self.prog.tables[t as usize].direct_meter.is_none() {
            return Err(EngineError::Invalid(format!("table '{}' has no direct meter", self.prog.tables[t as usize].name)));
        }
        let e = self.entry_mut(table, handle)?;
        e.meter.set_rates(rates[0].0, rates[0].1, rates[1].0, rates[1].1);
        Ok(())
    }

    pub(crate) fn lookup_name(map: &HashMap<String, u32>, kind: &'static str, name: &str) -> Result<u32, EngineError> {
        if let Some(i) = map.get(name) {
            return Ok(*i);
        }
        let mut found = None;
        for (n, i) in map {
            if n.ends_with(&format!(".{name}")) {
                if found.is_some() {
                    return Err(EngineError::Invalid(format!("{kind} name '{name}' is ambiguous")));
                }
                found = Some(*i);
            }
        }
        found.ok_or_else(|| EngineError::UnknownName { kind, name: name.to_string() })
    }

    pub fn counter_read(&self, name: &str, index: usize) -> Result<(u64, u64), EngineError> {
        let c = Self::lookup_name(&self.prog.names.counters, "counter", name)?;
        let cells = &self.rt.ext.counters[c as usize];
        match cells.get(index) {
            Some(x) => Ok((x.bytes, x.packets)),
            None => Err(EngineError::OutOfRange { what: format!("counter '{name}'"), index, size: cells.len() }),
        }
    }

    pub fn counter_write(&mut self, name: &str, index: usize, bytes: u64, packets: u64) -> Result<(), EngineError> {
        let c = Self::lookup_name(&self.prog.names.counters, "counter", name)?;
        let cells = &mut self.rt.ext.counters[c as usize];
        let size = cells.len();
        match cells.get_mut(index) {
            Some(x) => {
                x.bytes = bytes;
                x.packets = packets;
                Ok(())
            }
            None => Err(EngineError::OutOfRange { what: format!("counter '{name}'"), index, size }),
        }
    }

    pub fn register_read(&self, name: &str, index: usize) -> Result<Val, EngineError> {
        let r = Self::lookup_name(&self.prog.names.registers, "register", name)?;
        let cells = &self.rt.ext.registers[r as usize];
        cells
            .get(index)
            .cloned()
            .ok_or(EngineError::OutOfRange { what: format!("register '{name}'"), index, size: cells.len() })
    }

    pub fn register_write(&mut self, name: &str, index: usize, v: &Val) -> Result<(), EngineError> {
        let r = Self::lookup_name(&self.prog.names.registers, "register", name)?;
        let w = self.prog.registers[r as usize].width;
        let cells = &mut self.rt.ext.registers[r as usize];
        let size = cells.len();
        match cells.get_mut(index) {
            Some(x) => {
                *x = v.trunc(w);
                Ok(())
            }
            None => Err(EngineError::OutOfRange { what: format!("register '{name}'"), index, size }),
        }
    }

    pub fn register_reset(&mut self, name: &str) -> Result<(), EngineError> {
        let r = Self::lookup_name(&self.prog.names.registers, "register", name)?;
        self.rt.ext.registers[r as usize].iter_mut().for_each(|x| *x = Val::ZERO);
        Ok(())
    }

    /// Sets a meter's rates: [(committed units/us, burst), (peak units/us, burst)];
    /// index None sets every cell.
    pub fn meter_set_rates(&mut self, name: &str, index: Option<usize>, rates: [(f64, u64); 2]) -> Result<(), EngineError> {
        let m = Self::lookup_name(&self.prog.names.meters, "meter", name)?;
        let cells = &mut self.rt.ext.meters[m as usize].cells;
        let size = cells.len();
        let range: Vec<usize> = match index {
            Some(i) if i < size => vec![i],
            Some(i) => return Err(EngineError::OutOfRange { what: format!("meter '{name}'"), index: i, size }),
            None => (0..size).collect(),
        };
        for i in range {
            cells[i].set_rates(rates[0].0, rates[0].1, rates[1].0, rates[1].1);
        }
        Ok(())
    }

    pub fn vset_add(&mut self, name: &str, value: &[u8]) -> Result<(), EngineError> {
        let v = Self::lookup_name(&self.prog.names.vsets, "value set", name)?;
        let width = self.prog.vsets[v as usize].width;
        let n = ((width + 7) / 8) as usize;
        let mut b = vec![0u8; n];
        let k = value.len().min(n);
        b[n - k..].copy_from_slice(&value[value.len() - k..]);
        self.rt.ext.vsets[v as usize].insert(b);
        Ok(())
    }

    pub fn mirroring_add(&mut self, session: u32, port: Option<u32>, mgid: Option<u32>) -> Result<(), EngineError> {
        if session > 32767 {
            return Err(EngineError::Invalid(format!("clone session {session} out of range 0..32767")));
        }
        let e = self.mirror.entry(session).or_default();
        if port.is_some() {
            e.port = port;
        }
        if mgid.is_some() {
            e.mgid = mgid;
        }
        Ok(())
    }

    pub fn mirroring_delete(&mut self, session: u32) {
        self.mirror.remove(&session);
    }

    /// Lines written by log_msg and run-time warnings.
    pub fn take_log(&mut self) -> Vec<String> {
        std::mem::take(&mut self.rt.log)
    }
}
