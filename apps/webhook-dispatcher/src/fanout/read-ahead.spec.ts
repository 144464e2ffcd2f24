import { ReadAheadDepth } from './read-ahead';

describe('ReadAheadDepth', () => {
  const setup = () => {
    const s = { now: 0, completed: 0, held: 0 };
    // at least 128, at most 4000, as many as start within 500 ms at the drain's pace
    const depth = new ReadAheadDepth(() => s.completed, () => s.held, 128, 4000, 500, () => s.now);
    return { s, depth };
  };

  it('holds the floor until the drain has been measured, then what starts within the target at its pace', () => {
    const { s, depth } = setup();
    expect(depth.limit()).toBe(128);
    s.held = 600;
    s.now = 250;
    s.completed = 500; // 2,000 a second
    expect(depth.limit()).toBe(1000);
    // within a window: no new measurement
    s.now = 300;
    s.completed = 5000;
    expect(depth.limit()).toBe(1000);
  });

  it('shrinks when the drain slows (a loaded machine), so first attempts do not wait past their hold', () => {
    const { s, depth } = setup();
    s.held = 600;
    s.now = 250;
    s.completed = 500;
    expect(depth.limit()).toBe(1000);
    // 400 a second from now on: the pace moves halfway there at each window
    const window400 = () => {
      s.now += 250;
      s.completed += 100;
      return depth.limit();
    };
    expect(window400()).toBe(600);
    for (let i = 0; i < 12; i++) window400();
    expect(depth.limit()).toBe(200);
  });

  it('keeps the last pace over idle windows (nothing held, nothing done) and stays within floor and ceiling', () => {
    const { s, depth } = setup();
    s.held = 100;
    s.now = 250;
    s.completed = 5000; // 20,000 a second
    expect(depth.limit()).toBe(4000);
    s.held = 0;
    s.now = 10_000;
    expect(depth.limit()).toBe(4000);
    // held but nothing completes (a receiver that hangs): the pace falls to the floor
    s.held = 50;
    for (let i = 0; i < 20; i++) {
      s.now += 250;
      depth.limit();
    }
    expect(depth.limit()).toBe(128);
  });
});
