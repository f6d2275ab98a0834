//! Ingress arbitration inside one egress queue: which ingress port's packet
//! leaves next when several ingress ports feed the same queue.
//!
//! simple_switch keeps one FIFO per queue, so the order is the arrival
//! order (`Fifo`, the default, kept in `Queue` itself). Here each ingress
//! port has a sub-queue; sub-queues are grouped, the groups are served by
//! surplus round robin (in bytes or packets) and the sub-queues of the
//! chosen group by surplus round robin in bytes. With one group holding
//! every port this is byte-fair arbitration (`fair`); with port groups it
//! reproduces the "group first" unfairness seen on some switch ASICs: a
//! port alone in its group gets as much as a whole group of busy ports.
//!
//! Each sub-queue is a virtual output queue: the queue's limits (packets,
//! bytes, dynamic threshold) apply to each ingress port's share, so a port
//! that arrives a moment earlier cannot take the space another port's
//! turn frees (the phase effect of a shared drop-tail queue).

use super::config::{ArbCfg, ArbMode, Cost, MAX_PORT};
use super::srr::Srr;
use crate::pipeline::Packet;
use std::collections::{HashMap, VecDeque};

const NONE: u16 = u16::MAX;

#[derive(Debug)]
struct Sub {
    fifo: VecDeque<Box<Packet>>,
    group: u16,
}

#[derive(Debug)]
pub struct Arbiter {
    cfg: ArbCfg,
    slot_of: Vec<u16>,
    subs: Vec<Sub>,
    group_slot: HashMap<u32, u16>,
    groups: Vec<Srr>,
    top: Srr,
    len: usize,
}

impl Arbiter {
    pub fn new(cfg: &ArbCfg) -> Arbiter {
        Arbiter {
            cfg: cfg.clone(),
            slot_of: vec![NONE; MAX_PORT as usize + 1],
            subs: vec![],
            group_slot: HashMap::new(),
            groups: vec![],
            top: Srr::new(if cfg.group_cost == Cost::Packets { 1 } else { cfg.quantum_bytes }),
            len: 0,
        }
    }

    pub fn cfg(&self) -> &ArbCfg {
        &self.cfg
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn slot(&mut self, ingress: u32) -> u16 {
        let i = (ingress.min(MAX_PORT)) as usize;
        if self.slot_of[i] != NONE {
            return self.slot_of[i];
        }
        let gid = match self.cfg.mode {
            ArbMode::Groups => self.cfg.group_of(ingress),
            _ => 0,
        };
        let ng = self.groups.len() as u16;
        let g = *self.group_slot.entry(gid).or_insert(ng);
        if g == ng {
            self.groups.push(Srr::new(self.cfg.quantum_bytes));
        }
        let s = self.subs.len() as u16;
        self.subs.push(Sub { fifo: VecDeque::new(), group: g });
        self.slot_of[i] = s;
        s
    }

    pub fn push(&mut self, pkt: Box<Packet>) {
        let s = self.slot(pkt.ingress_port);
        let g = self.subs[s as usize].group;
        self.subs[s as usize].fifo.push_back(pkt);
        self.groups[g as usize].activate(s);
        self.top.activate(g);
        self.len += 1;
    }

    pub fn pop(&mut self) -> Option<Box<Packet>> {
        let g = self.top.pick(|_| true)?;
        let grp = &mut self.groups[g as usize];
        let subs = &self.subs;
        let s = grp.pick(|s| !subs[s as usize].fifo.is_empty())?;
        let pkt = self.subs[s as usize].fifo.pop_front()?;
        super::queue::prefetch_next(&self.subs[s as usize].fifo);
        let bytes = pkt.tm_len;
        let more = !self.subs[s as usize].fifo.is_empty();
        let grp = &mut self.groups[g as usize];
        grp.charge(s, bytes, more);
        let gmore = !grp.is_empty();
        let cost = if self.cfg.group_cost == Cost::Packets { 1 } else { bytes };
        self.top.charge(g, cost, gmore);
        self.len -= 1;
        Some(pkt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;

    fn pkt(ingress: u32, len: u32) -> Box<Packet> {
        let p = json::load(crate::engine::tests::MINIMAL).unwrap();
        let mut b = Box::new(Packet::new(&p));
        b.ingress_port = ingress;
        b.tm_len = len;
        b
    }

    /// Keeps every listed ingress port backlogged; returns bytes served per port.
    fn run(cfg: &ArbCfg, ports: &[(u32, u32)], n: usize) -> HashMap<u32, u64> {
        let mut a = Arbiter::new(cfg);
        for (p, l) in ports {
            // two each: a port stays backlogged while one of its packets is out
            a.push(pkt(*p, *l));
            a.push(pkt(*p, *l));
        }
        let mut got = HashMap::new();
        for _ in 0..n {
            let x = a.pop().unwrap();
            *got.entry(x.ingress_port).or_insert(0) += x.tm_len as u64;
            let l = x.tm_len;
            a.push(pkt(x.ingress_port, l));
        }
        got
    }

    #[test]
    fn fair_mode_is_byte_fair() {
        let cfg = ArbCfg { mode: ArbMode::Fair, ..ArbCfg::default() };
        let got = run(&cfg, &[(1, 64), (2, 1518), (3, 576)], 100_000);
        let total: u64 = got.values().sum();
        for v in got.values() {
            assert!((*v as f64 / total as f64 - 1.0 / 3.0).abs() < 0.01, "{got:?}");
        }
    }

    #[test]
    fn groups_are_served_first() {
        // Tolly's ports 8-13 on a switch with 8-port groups: port 8 is alone
        // in group 1-8 and gets half the bandwidth.
        let cfg = ArbCfg { mode: ArbMode::Groups, group_size: Some(8), first_port: 1, ..ArbCfg::default() };
        let ports: Vec<(u32, u32)> = (8..=13).map(|p| (p, 1000)).collect();
        let got = run(&cfg, &ports, 60_000);
        let total: u64 = got.values().sum();
        assert!((got[&8] as f64 / total as f64 - 0.5).abs() < 0.01);
        assert!((got[&9] as f64 / total as f64 - 0.1).abs() < 0.01);
    }
}
