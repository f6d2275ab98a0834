//! Stateful externs from Python: counters, registers, meters, value sets
//! and mirroring sessions.

use super::*;

#[pymethods]
impl Engine {
    fn counter_read(&self, name: &str, index: usize) -> PyResult<(u64, u64)> {
        guard(|| self.lock().sw.counter_read(name, index).map_err(to_py))
    }

    fn counter_write(&mut self, name: &str, index: usize, bytes: u64, packets: u64) -> PyResult<()> {
        guard(|| self.lock().sw.counter_write(name, index, bytes, packets).map_err(to_py))
    }

    fn register_read(&self, py: Python<'_>, name: &str, index: usize) -> PyResult<PyObject> {
        let v = guard(|| self.lock().sw.register_read(name, index).map_err(to_py))?;
        Ok(val_to_py(py, &v))
    }

    fn register_write(&mut self, name: &str, index: usize, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let v = to_val(value)?;
        guard(|| self.lock().sw.register_write(name, index, &v).map_err(to_py))
    }

    fn register_reset(&mut self, name: &str) -> PyResult<()> {
        guard(|| self.lock().sw.register_reset(name).map_err(to_py))
    }

    /// rates: [(committed units per us, burst), (peak units per us, burst)].
    #[pyo3(signature = (name, index, rates))]
    fn meter_set_rates(&mut self, name: &str, index: Option<usize>, rates: Vec<(f64, u64)>) -> PyResult<()> {
        if rates.len() != 2 {
            return Err(EngineError::new_err("a meter takes two (rate, burst) pairs"));
        }
        guard(|| self.lock().sw.meter_set_rates(name, index, [rates[0], rates[1]]).map_err(to_py))
    }

    fn vset_add(&mut self, name: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let b = to_bytes(value)?;
        guard(|| self.lock().sw.vset_add(name, &b).map_err(to_py))
    }

    #[pyo3(signature = (session, port=None, mgid=None))]
    fn mirroring_add(&mut self, session: u32, port: Option<u32>, mgid: Option<u32>) -> PyResult<()> {
        guard(|| self.lock().sw.mirroring_add(session, port, mgid).map_err(to_py))
    }

    fn mirroring_delete(&mut self, session: u32) {
        self.lock().sw.mirroring_delete(session)
    }
}
