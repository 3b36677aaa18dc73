/* Takes the address of the `scale` that both libraries define (no GPU needed to link). */
extern int scale(void);

int main(void) { return scale == 0; }
