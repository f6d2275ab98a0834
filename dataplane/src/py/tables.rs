//! Table entries through the Python face: add, modify, delete, defaults,
//! idle timeouts, direct counters and the program's table and action names.

use super::*;

#[pymethods]
impl Engine {
    /// Adds a table entry; returns its handle. `priority`: lower wins (BMv2).
    #[pyo3(signature = (table, action, key, args=None, priority=0))]
    fn table_add(
        &mut self,
        table: &str,
        action: &str,
        key: &Bound<'_, PyAny>,
        args: Option<&Bound<'_, PyAny>>,
        priority: i32,
    ) -> PyResult<u32> {
        let k = to_key(key)?;
        let a = vals(args)?;
        guard(|| self.lock().sw.table_add(table, &k, action, &a, priority).map_err(to_py))
    }

    /// Adds entries to one table in one call: `entries` holds (action, key,
    /// args, priority) as table_add takes them. One item per entry, in
    /// order: its handle, or the message of the error that refused it (the
    /// others are added all the same). A malformed item raises before any
    /// entry is added.
    fn table_add_many(&mut self, py: Python<'_>, table: &str, entries: &Bound<'_, PyAny>) -> PyResult<Vec<PyObject>> {
        let mut items = vec![];
        for item in entries.iter()? {
            let (action, key, args, priority): (String, Bound<'_, PyAny>, Bound<'_, PyAny>, i32) = item?.extract()?;
            items.push((action, to_key(&key)?, vals(Some(&args))?, priority));
        }
        guard(|| {
            let mut c = self.lock();
            // the table resolved once, each action once while it repeats
            let t = c.sw.table_id(table);
            let mut last: Option<(&str, Result<u32, String>)> = None;
            Ok(items
                .iter()
                .map(|(action, key, args, priority)| {
                    let t = t.as_ref().map_err(|e| e.to_string())?;
                    let a = match &last {
                        Some((name, a)) if name == action => a.clone(),
                        _ => {
                            let a = c.sw.action_id(*t, action).map_err(|e| e.to_string());
                            last = Some((action, a.clone()));
                            a
                        }
                    }?;
                    c.sw.table_add_ids(*t, a, key, args, *priority).map_err(|e| e.to_string())
                })
                .map(|got: Result<u32, String>| match got {
                    Ok(handle) => handle.into_py(py),
                    Err(e) => e.into_py(py),
                })
                .collect())
        })
    }

    #[pyo3(signature = (table, handle, action, args=None))]
    fn table_modify(&mut self, table: &str, handle: u32, action: &str, args: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let a = vals(args)?;
        guard(|| self.lock().sw.table_modify(table, handle, action, &a).map_err(to_py))
    }

    fn table_delete(&mut self, table: &str, handle: u32) -> PyResult<()> {
        guard(|| self.lock().sw.table_delete(table, handle).map_err(to_py))
    }

    fn table_clear(&mut self, table: &str) -> PyResult<()> {
        guard(|| self.lock().sw.table_clear(table).map_err(to_py))
    }

    /// Removes every entry of every table.
    fn clear_all_tables(&mut self) {
        self.lock().sw.clear_all_tables()
    }

    #[pyo3(signature = (table, action, args=None))]
    fn table_set_default(&mut self, table: &str, action: &str, args: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let a = vals(args)?;
        guard(|| self.lock().sw.table_set_default(table, action, &a).map_err(to_py))
    }

    fn table_entry_count(&mut self, table: &str) -> PyResult<usize> {
        guard(|| self.lock().sw.table_entry_count(table).map_err(to_py))
    }

    // ----- idle timeout --------------------------------------------------------

    /// An entry's idle timeout in ns (None: it never ages); its clock restarts.
    #[pyo3(signature = (table, handle, ttl_ns))]
    fn table_set_entry_ttl(&mut self, table: &str, handle: u32, ttl_ns: Option<u64>) -> PyResult<()> {
        guard(|| self.lock().sw.table_set_entry_ttl(table, handle, ttl_ns).map_err(to_py))
    }

    /// Nanoseconds since the entry was last hit (or added).
    fn table_entry_idle_ns(&mut self, table: &str, handle: u32) -> PyResult<u64> {
        guard(|| self.lock().sw.table_entry_idle_ns(table, handle).map_err(to_py))
    }

    /// Entries whose idle timeout expired (by the switch's time, or `now_ns`),
    /// each reported once until hit again: [(table, handle, idle_ns)].
    #[pyo3(signature = (now_ns=None))]
    fn idle_sweep(&mut self, now_ns: Option<u64>) -> Vec<(String, u32, u64)> {
        let mut c = self.lock();
        let now = now_ns.unwrap_or(c.sw.now_ns());
        c.sw.idle_sweep(now)
    }

    /// (bytes, packets) of an entry's direct counter.
    fn direct_counter_read(&self, table: &str, handle: u32) -> PyResult<(u64, u64)> {
        guard(|| self.lock().sw.direct_counter(table, handle).map_err(to_py))
    }

    /// Sets an entry's direct counter to (bytes, packets).
    fn direct_counter_write(&mut self, table: &str, handle: u32, bytes: u64, packets: u64) -> PyResult<()> {
        guard(|| self.lock().sw.direct_counter_write(table, handle, bytes, packets).map_err(to_py))
    }

    /// rates: [(committed units per us, burst), (peak units per us, burst)].
    fn direct_meter_set_rates(&mut self, table: &str, handle: u32, rates: Vec<(f64, u64)>) -> PyResult<()> {
        if rates.len() != 2 {
            return Err(EngineError::new_err("a meter takes two (rate, burst) pairs"));
        }
        guard(|| self.lock().sw.direct_meter_set_rates(table, handle, [rates[0], rates[1]]).map_err(to_py))
    }

    /// The full names of the program's tables.
    fn table_names(&self) -> Vec<String> {
        self.lock().sw.prog.tables.iter().map(|t| t.name.clone()).collect()
    }

    /// For each table: (name, match_type, [(key name, match kind, width)], [action names]).
    fn table_info(&self, py: Python<'_>) -> PyObject {
        let list = PyList::empty_bound(py);
        let c = self.lock();
        for t in &c.sw.prog.tables {
            let keys: Vec<(String, String, u32)> =
                t.keys.iter().map(|k| (k.name.clone(), format!("{:?}", k.kind).to_lowercase(), k.width)).collect();
            let acts: Vec<String> = t.actions.iter().map(|a| c.sw.prog.actions[*a as usize].name.clone()).collect();
            let mt = format!("{:?}", t.match_type).to_lowercase();
            let _ = list.append((t.name.clone(), mt, keys, acts));
        }
        list.into()
    }

    /// For each action: (name, [(param name, width)]).
    fn action_info(&self) -> Vec<(String, Vec<(String, u32)>)> {
        self.lock()
            .sw
            .prog
            .actions
            .iter()
            .map(|a| (a.name.clone(), a.params.iter().map(|p| (p.name.clone(), p.width)).collect()))
            .collect()
    }
}
