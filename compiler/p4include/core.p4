// p4scope: the P4-16 core library.
//
// Declares the built-in error codes, match kinds, packet_in/packet_out,
// verify(), NoAction and static_assert().  Names, parameter names,
// directions, types, member order and annotations follow p4c's core.p4,
// so programs written against p4c compile unchanged and produce the same
// P4Info (P4Info copies annotations such as NoAction's @noWarn).

#ifndef _CORE_P4_
#define _CORE_P4_

// Parser error codes; programs may add their own with further `error`
// declarations.  The order is the order of the BMv2 JSON `errors` list.
error {
    NoError,
    PacketTooShort,
    NoMatch,
    StackOutOfBounds,
    HeaderTooShort,
    ParserTimeout,
    ParserInvalidArgument
}

// The packet being parsed.
extern packet_in {
    // Copy the next bits of the packet into a fixed-size header.
    void extract<T>(out T hdr);
    // Same for a header with one varbit field of the given size in bits.
    void extract<T>(out T variableSizeHeader,
                    in bit<32> variableFieldSizeInBits);
    // Read ahead without moving the cursor.
    T lookahead<T>();
    // Move the cursor forward.
    void advance(in bit<32> sizeInBits);
    // Length of the packet in bytes (where the target supports it).
    bit<32> length();
}

// The packet being built by a deparser.
extern packet_out {
    // Append hdr (header, stack, union, or a struct of those) if valid.
    void emit<T>(in T hdr);
}

// In a parser: when check is false, set the parser error to toSignal and
// go to reject.
extern void verify(in bool check, in error toSignal);

// The action that does nothing; the default action of most tables.
@noWarn("unused")
action NoAction() {}

// Table key match kinds every target knows; architectures add more.
match_kind {
    exact,
    ternary,
    lpm
}

// Checked by the compiler; stops compilation with the message when false.
// Returns a bool so it can initialise a constant.
extern bool static_assert(bool check, string message);
extern bool static_assert(bool check);

#endif  // _CORE_P4_
