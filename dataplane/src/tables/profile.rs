//! Action profiles and selectors at run time (BMv2's act_prof_* API).
//!
//! A member is an action with its data; a group is a set of members. An
//! indirect table entry points at a member or a group. For a group the
//! member that runs is chosen as BMv2 does: the selector's hash of the
//! packet modulo the group size, over the members in handle order. Beyond
//! BMv2 (as P4Runtime describes them) a member may have a weight (it is
//! counted that many times) and a watch port (it is left out while that
//! port is down).

use crate::value::Val;

/// What an entry runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Ref {
    #[default]
    Direct,
    Member(u32),
    Group(u32),
}

#[derive(Clone, Debug)]
pub struct Member {
    pub action: u32,
    pub data: Vec<Val>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupMember {
    pub member: u32,
    pub weight: u32,
    pub watch: Option<u32>,
}

#[derive(Clone, Debug, Default)]
pub struct Group {
    /// Sorted by member handle.
    pub members: Vec<GroupMember>,
    /// The members selection chooses from (weights expanded, members whose
    /// watch port is down left out), valid for `version`.
    live: Vec<u32>,
    version: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProfileError {
    NoSuchMember(u32),
    NoSuchGroup(u32),
    Full,
    MemberInGroup(u32),
    AlreadyInGroup(u32),
    NotInGroup(u32),
}

impl std::fmt::Display for ProfileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProfileError::NoSuchMember(m) => write!(f, "no member with handle {m}"),
            ProfileError::NoSuchGroup(g) => write!(f, "no group with handle {g}"),
            ProfileError::Full => write!(f, "the action profile is full"),
            ProfileError::MemberInGroup(m) => write!(f, "member {m} is still in a group"),
            ProfileError::AlreadyInGroup(m) => write!(f, "member {m} is already in the group"),
            ProfileError::NotInGroup(m) => write!(f, "member {m} is not in the group"),
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct ProfileState {
    pub members: Vec<Option<Member>>,
    free_m: Vec<u32>,
    pub groups: Vec<Option<Group>>,
    free_g: Vec<u32>,
    max_size: usize,
    count: usize,
}

/// Which ports are down (for watch ports), with a version that changes on
/// every change so groups know when to recompute.
#[derive(Clone, Debug, Default)]
pub struct PortStatus {
    down: Vec<bool>,
    pub version: u64,
}

impl PortStatus {
    pub fn set(&mut self, port: u32, up: bool) {
        let i = port as usize;
        if i >= self.down.len() {
            self.down.resize(i + 1, false);
        }
        if self.down[i] == up {
            self.down[i] = !up;
            self.version += 1;
        }
    }

    pub fn is_up(&self, port: u32) -> bool {
        !self.down.get(port as usize).copied().unwrap_or(false)
    }
}

impl ProfileState {
    pub fn new(max_size: u32) -> ProfileState {
        ProfileState { max_size: max_size.max(1) as usize, ..Default::default() }
    }

    pub fn create_member(&mut self, action: u32, data: Vec<Val>) -> Result<u32, ProfileError> {
        if self.count >= self.max_size {
            return Err(ProfileError::Full);
        }
        self.count += 1;
        let m = Some(Member { action, data });
        Ok(match self.free_m.pop() {
            Some(h) => {
                self.members[h as usize] = m;
                h
            }
            None => {
                self.members.push(m);
                self.members.len() as u32 - 1
            }
        })
    }

    pub fn member(&self, h: u32) -> Result<&Member, ProfileError> {
        self.members.get(h as usize).and_then(|m| m.as_ref()).ok_or(ProfileError::NoSuchMember(h))
    }

    pub fn member_mut(&mut self, h: u32) -> Option<&mut Member> {
        self.members.get_mut(h as usize).and_then(|m| m.as_mut())
    }

    pub fn modify_member(&mut self, h: u32, action: u32, data: Vec<Val>) -> Result<(), ProfileError> {
        let m = self.member_mut(h).ok_or(ProfileError::NoSuchMember(h))?;
        m.action = action;
        m.data = data;
        Ok(())
    }

    pub fn delete_member(&mut self, h: u32) -> Result<(), ProfileError> {
        self.member(h)?;
        if self.groups.iter().flatten().any(|g| g.members.iter().any(|x| x.member == h)) {
            return Err(ProfileError::MemberInGroup(h));
        }
        self.members[h as usize] = None;
        self.free_m.push(h);
        self.count -= 1;
        Ok(())
    }

    pub fn create_group(&mut self) -> u32 {
        let g = Some(Group { version: u64::MAX, ..Default::default() });
        match self.free_g.pop() {
            Some(h) => {
                self.groups[h as usize] = g;
                h
            }
            None => {
                self.groups.push(g);
                self.groups.len() as u32 - 1
            }
        }
    }

    fn group_mut(&mut self, g: u32) -> Result<&mut Group, ProfileError> {
        self.groups.get_mut(g as usize).and_then(|x| x.as_mut()).ok_or(ProfileError::NoSuchGroup(g))
    }

    pub fn group(&self, g: u32) -> Result<&Group, ProfileError> {
        self.groups.get(g as usize).and_then(|x| x.as_ref()).ok_or(ProfileError::NoSuchGroup(g))
    }

    pub fn delete_group(&mut self, g: u32) -> Result<(), ProfileError> {
        self.group_mut(g)?;
        self.groups[g as usize] = None;
        self.free_g.push(g);
        Ok(())
    }

    pub fn add_to_group(&mut self, m: u32, g: u32, weight: u32, watch: Option<u32>) -> Result<(), ProfileError> {
        self.member(m)?;
        let grp = self.group_mut(g)?;
        match grp.members.binary_search_by_key(&m, |x| x.member) {
            Ok(_) => Err(ProfileError::AlreadyInGroup(m)),
            Err(i) => {
                grp.members.insert(i, GroupMember { member: m, weight: weight.max(1), watch });
                grp.version = u64::MAX;
                Ok(())
            }
        }
    }

    pub fn remove_from_group(&mut self, m: u32, g: u32) -> Result<(), ProfileError> {
        let grp = self.group_mut(g)?;
        match grp.members.binary_search_by_key(&m, |x| x.member) {
            Ok(i) => {
                grp.members.remove(i);
                grp.version = u64::MAX;
                Ok(())
            }
            Err(_) => Err(ProfileError::NotInGroup(m)),
        }
    }

    /// The member a packet with selector hash `hash` runs, if the group has
    /// any live member.
    pub fn select(&mut self, g: u32, hash: u64, ports: &PortStatus) -> Option<u32> {
        let grp = self.groups.get_mut(g as usize)?.as_mut()?;
        if grp.version != ports.version {
            grp.live.clear();
            for m in &grp.members {
                if m.watch.map(|p| ports.is_up(p)).unwrap_or(true) {
                    for _ in 0..m.weight {
                        grp.live.push(m.member);
                    }
                }
            }
            grp.version = ports.version;
        }
        if grp.live.is_empty() {
            return None;
        }
        Some(grp.live[(hash % grp.live.len() as u64) as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_groups_selection_weights_and_watch_ports() {
        let mut p = ProfileState::new(16);
        let a = p.create_member(1, vec![Val::from(10u64)]).unwrap();
        let b = p.create_member(1, vec![Val::from(20u64)]).unwrap();
        let g = p.create_group();
        p.add_to_group(b, g, 1, Some(7)).unwrap();
        p.add_to_group(a, g, 2, None).unwrap();
        assert_eq!(p.add_to_group(a, g, 1, None), Err(ProfileError::AlreadyInGroup(a)));
        let mut ports = PortStatus::default();
        // handle order, weights expanded: [a, a, b]
        let picks: Vec<u32> = (0..3).map(|h| p.select(g, h, &ports).unwrap()).collect();
        assert_eq!(picks, vec![a, a, b]);
        ports.set(7, false);
        assert!((0..10).all(|h| p.select(g, h, &ports) == Some(a)), "watch port 7 down");
        ports.set(7, true);
        assert_eq!(p.select(g, 2, &ports), Some(b));
        assert_eq!(p.delete_member(a), Err(ProfileError::MemberInGroup(a)));
        p.remove_from_group(a, g).unwrap();
        p.remove_from_group(b, g).unwrap();
        assert_eq!(p.select(g, 0, &ports), None, "empty group");
        p.delete_member(a).unwrap();
        assert!(p.member(a).is_err());
        p.delete_group(g).unwrap();
        assert!(p.group(g).is_err());
    }
}
