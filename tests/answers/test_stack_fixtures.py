"""STACK's answer-test fixtures as data (issue 28): the rows of Moodle STACK's NumRelative,
NumAbsolute, NumSigFigs, NumDecPlaces and AlgEquiv tests that examprep's answer syntax expresses,
each with its source line, STACK's verdict and examprep's, and where the two differ, the reason in
one line. Facts transcribed from the public fixture table; examprep's own code decides.

Source: maths/moodle-qtype_stack at a14f3034a0e45aab27dcae96c526a6095dbf6ef7,
tests/fixtures/answertestfixtures.class.php (the line where the row starts). STACK's verdict is
its fixture's: 1 same, 0 different, -1 the test fails on invalid input (examprep: unreadable),
-3 a known failure of STACK's own where the right verdict is 1 (the rows compare with that).

How a row reads in examprep (Maxima's %pi and %e are pi and e):
  NumRelative, option X (default 0.05)  a number (a list: a vector) part, rtol:X with no floor
  NumAbsolute, option X (default 0.05)  the same with atol:X
  NumSigFigs, option N                  sigfigs-strict:N (STACK's [N, M] options have no counterpart)
  NumDecPlaces, option N                decimals:N
  AlgEquiv                              an exact expression part in the names both answers use, which
                                        are positive unless a part declares them (REAL_ROWS: declared real)
Left out: rows whose teacher's answer is an error, options and answers examprep has no syntax for
(sets, equations, inequalities, logic, complex numbers, subscripts, lists in AlgEquiv, STACK's
display functions, functions examprep does not know), and the rows of the other answer tests.

Agreement per answer test (a row agrees when both accept, or neither does), before issue 28
(examprep at the start of this branch; NumSigFigs as the lenient sigfigs:N, as strict figures did
not exist) and after:
                   before              after
  NumRelative      20 agree,  2 differ  22 agree,  0 differ
  NumAbsolute      13 agree,  0 differ  13 agree,  0 differ
  NumSigFigs       61 agree, 22 differ  83 agree,  0 differ
  NumDecPlaces     14 agree,  4 differ  14 agree,  4 differ   (decimals written: see WHY)
  AlgEquiv         80 agree, 21 differ  81 agree, 20 differ   (each with its reason; 1 crashed before)
Issue 36 (the principal branch, examprep.answers.numeric): line 164 now agrees too, sqrt((x-3)*(x-5))
is not sqrt(x-3)*sqrt(x-5) (they differ for x < 3): AlgEquiv 82 agree, 19 differ; no other row changed.
"""
import re

import pytest

from examprep.answers import check_part
from examprep.answers.evaluate import evaluate_all
from examprep.answers.parse import parse_text
from examprep.answers.tokens import CONSTANTS, FUNCTION_ALIASES, FUNCTIONS
from examprep.answers.rules import key_part_error
from examprep.problem import EXACT, Part, Tolerance

WHY = {
    "exact-float": "examprep reads 4.52*10^2 and 100.4 - 80.0 as the exact decimals they are; Maxima computes them in floats",
    "e-notation": "in an expression part '5.1e-2' is ambiguous (5.1·e − 2, or 0.051?), refused as unreadable (issue 14, item 9)",
    "approx": "a typed decimal within a relative 1e-8 of the exact value is accepted as a decimal approximation, and says so",
    "approx-tie": "0.99999999 is exactly 1e-8 from 1: a tie of the decimal-approximation rule, which accepts it",
    "inf": "examprep evaluates in the extended reals, where 2·∞ = ∞; Maxima leaves 2*inf unsimplified",
    "zero-inf": "0·∞ has no value in the extended reals, so the answer is unreadable; Maxima simplifies 0*inf to 0",
    "positive": "variables are positive unless the part declares them otherwise (declared real, examprep agrees: REAL_ROWS)",
    "positive-powers": "variables are positive unless the part declares them otherwise, and (a^b)^c = a^(bc) for a > 0",
    "power": "examprep refuses an exponent over 1,000 in a key as in an answer (its documented size rule)",
    "no-real-point": "n is a positive real by default, so (-1)^n has no real value at any sample point: no equivalence is shown",
    "log-abs": "log|x²−9| = log|x−3| + log|x+3| wherever both are defined, which examprep finds; STACK's AlgEquiv does not",
    "combine-powers": "for n > 0 (the default) both are (n+1)^((n+2)/(n+1))/(n+2); STACK's AlgEquiv does not combine the powers",
    "decimals-written": "decimals:N checks the value only; STACK's NumDecPlaces also requires exactly N decimals written",
}

# line, test, option, student's answer, teacher's answer, STACK's verdict, examprep's verdict, reason (WHY)
ROWS = [
    (69, "AlgEquiv", "", "1/0", "1", -1, "unparseable", ""),
    (71, "AlgEquiv", "", "", "(x-1)^2", -1, "blank", ""),
    (73, "AlgEquiv", "", "x-1)^2", "(x-1)^2", -1, "unparseable", ""),
    (93, "AlgEquiv", "", "X", "x", 0, "wrong", ""),
    (94, "AlgEquiv", "", "1/(R-r)", "1", 0, "wrong", ""),
    (101, "AlgEquiv", "", "v+w+x+y+z", "a+b+c+A+B", 0, "wrong", ""),
    (102, "AlgEquiv", "", "4^(-1/2)", "1/2", 1, "correct", ""),
    (103, "AlgEquiv", "", "4^(1/2)", "sqrt(4)", 1, "correct", ""),
    (104, "AlgEquiv", "", "0.5", "1/2", 1, "correct", ""),
    (105, "AlgEquiv", "", "0.33", "1/3", 0, "wrong", ""),
    (107, "AlgEquiv", "", "452", "4.52*10^2", 0, "correct", "exact-float"),
    (108, "AlgEquiv", "", "5.1e-2", "51/1000", 1, "unparseable", "e-notation"),
    (109, "AlgEquiv", "", "0.333333333333333", "1/3", 0, "correct", "approx"),
    (111, "AlgEquiv", "", "0.99999999", "1", 0, "correct", "approx-tie"),
    (112, "AlgEquiv", "", "0.99999999", "99999999/10^8", 1, "correct", ""),
    (113, "AlgEquiv", "", "0.99999999", "99999998/99999999", 1, "correct", ""),
    (114, "AlgEquiv", "", "99999999/10^8", "99999998/99999999", 0, "wrong", ""),
    (115, "AlgEquiv", "", "(0.5+x)*2", "2*x+1", 1, "correct", ""),
    (116, "AlgEquiv", "", "0.333333333333333*x^2", "x^2/3", 0, "correct", "approx"),
    (117, "AlgEquiv", "", "0.1*(2.0*s^2+6.0*s-25.0)/s", "(2*s^2+6*s-25)/(10*s)", 1, "correct", ""),
    (118, "AlgEquiv", "", "0.1*(2.0*s^2+6.0*s-25.00001)/s", "(2*s^2+6*s-25)/(10*s)", 0, "wrong", ""),
    (120, "AlgEquiv", "", "100.4-80.0", "20.4", 0, "correct", "exact-float"),
    (149, "AlgEquiv", "", "inf", "inf", 1, "correct", ""),
    (150, "AlgEquiv", "", "inf", "-inf", 0, "wrong", ""),
    (151, "AlgEquiv", "", "2*inf", "inf", 0, "correct", "inf"),
    (152, "AlgEquiv", "", "0*inf", "0", 1, "unparseable", "zero-inf"),
    (155, "AlgEquiv", "", "x^(1/2)", "sqrt(x)", 1, "correct", ""),
    (156, "AlgEquiv", "", "x", "sqrt(x^2)", 0, "correct", "positive"),
    (161, "AlgEquiv", "", "abs(x)", "sqrt(x^2)", 1, "correct", ""),
    (163, "AlgEquiv", "", "1/abs(x)^(1/3)", "(abs(x)^(1/3)/abs(x))^(1/2)", 1, "correct", ""),
    (164, "AlgEquiv", "", "sqrt((x-3)*(x-5))", "sqrt(x-3)*sqrt(x-5)", 0, "wrong", ""),     # issue 36: x < 3
    (165, "AlgEquiv", "", "1/sqrt(x)", "sqrt(1/x)", 1, "correct", ""),
    (166, "AlgEquiv", "", "x-1", "(x^2-1)/(x+1)", 1, "correct", ""),
    (167, "AlgEquiv", "", "2^((1/5.1)*t)", "2^((1/5.1)*t)", 1, "correct", ""),
    (168, "AlgEquiv", "", "2^((1/5.1)*t)", "2^(0.196078431373*t)", 0, "correct", "approx"),
    (172, "AlgEquiv", "", "a^b*a^c", "a^(b+c)", 1, "correct", ""),
    (173, "AlgEquiv", "", "(a^b)^c", "a^(b*c)", 0, "correct", "positive-powers"),
    (177, "AlgEquiv", "", "6*((x-2)^3)^k", "6*(x-2)^(3*k)", 1, "correct", ""),
    (179, "AlgEquiv", "", "2+2*sqrt(3+x)", "2+sqrt(12+4*x)", 1, "correct", ""),
    (180, "AlgEquiv", "", "6*e^(6*(y^2+x^2))+72*x^2*e^(6*(y^2+x^2))", "(72*x^2+6)*e^(6*(y^2+x^2))", 1, "correct", ""),
    (187, "AlgEquiv", "", "sqrt(k/m)*sqrt(m/k)", "1", 1, "correct", ""),
    (188, "AlgEquiv", "", "(2*pi)/(k/m)^(1/2)", "(2*pi)/(k/m)^(1/2)", 1, "correct", ""),
    (189, "AlgEquiv", "", "(2*pi)*(m/k)^(1/2)", "(2*pi)/(k/m)^(1/2)", 1, "correct", ""),
    (190, "AlgEquiv", "", "sqrt(2*x/10+1)", "sqrt((2*x+10)/10)", 1, "correct", ""),
    (192, "AlgEquiv", "", "((x+3)^2*(x+3))^(1/3)", "((x+3)*(x^2+6*x+9))^(1/3)", 1, "correct", ""),
    (193, "AlgEquiv", "", "((x+3)^2*(x+3))^(1/3)", "((x+3)*(x^2+6*x+9))^(1/3)", 1, "correct", ""),
    (195, "AlgEquiv", "", "(x-1)^2", "x^2-2*x+1", 1, "correct", ""),
    (196, "AlgEquiv", "", "(x-1)*(x^2+x+1)", "x^3-1", 1, "correct", ""),
    (197, "AlgEquiv", "", "(x-1)^(-2)", "1/(x^2-2*x+1)", 1, "correct", ""),
    (198, "AlgEquiv", "", "1/(4*x-(%pi+sqrt(2)))", "1/(x+1)", 0, "wrong", ""),
    (199, "AlgEquiv", "", "(x-a)^6000", "(x-a)^6000", 1, "key refused", "power"),
    (200, "AlgEquiv", "", "(a-x)^6000", "(x-a)^6000", 1, "key refused", "power"),
    (201, "AlgEquiv", "", "(4*a-x)^6000", "(x-4*a)^6000", 1, "key refused", "power"),
    (202, "AlgEquiv", "", "(x-a)^6000", "(x-a)^5999", 0, "key refused", "power"),
    (203, "AlgEquiv", "", "(k+8)/(k^2+4*k-12)", "(k+8)/(k^2+4*k-12)", 1, "correct", ""),
    (204, "AlgEquiv", "", "(k+7)/(k^2+4*k-12)", "(k+8)/(k^2+4*k-12)", 0, "wrong", ""),
    (205, "AlgEquiv", "", "-(2*k+6)/(k^2+4*k-12)", "-(2*k+6)/(k^2+4*k-12)", 1, "correct", ""),
    (206, "AlgEquiv", "", "1/n-1/(n+1)", "1/(n*(n+1))", 1, "correct", ""),
    (207, "AlgEquiv", "", "1/(a-b)-1/(b-a)", "1/(a-b)+1/(b-a)", 0, "wrong", ""),
    (208, "AlgEquiv", "", "0.5*x^2+3*x-1", "x^2/2+3*x-1", 1, "correct", ""),
    (209,
     "AlgEquiv",
     "",
     ("14336000000*x^13+250265600000*x^12+1862860800000*x^11+7623925760000*x^10+18290677760000*x^9+2474"
         "4757985280*x^8+14567212351488*x^7-3267871272960*x^6-6408053107200*x^5+670406720000*x^4+117970880"
         "0000*x^3-429244800000*x^2+56696000000*x-2680000000"),
     "512*(2*x+5)^7*(5*x-1)^5*(70*x+67)",
     1,
     "correct",
     ""),
    (215,
     "AlgEquiv",
     "",
     ("14336000000*x^13+250265600000*x^12+1862860800000*x^11+7623925760000*x^10+18290677760000*x^9+2474"
         "4757985280*x^8+14567212351488*x^7-3267871272960*x^6-6408053107200*x^5+670406720000*x^4+117970880"
         "0000*x^3-429244800000*x^2+56696000000*x-2680000001"),
     "512*(2*x+5)^7*(5*x-1)^5*(70*x+67)",
     0,
     "wrong",
     ""),
    (221, "AlgEquiv", "", "14336000000*x^13", "512*(2*x+5)^7*(5*x-1)^5*(70*x+67)", 0, "wrong", ""),
    (223, "AlgEquiv", "", "cos(x)", "cos(-x)", 1, "correct", ""),
    (224, "AlgEquiv", "", "cos(x)^2+sin(x)^2", "1", 1, "correct", ""),
    (225, "AlgEquiv", "", "cos(x+y)", "cos(x)*cos(y)-sin(x)*sin(y)", 1, "correct", ""),
    (226, "AlgEquiv", "", "cos(x+y)", "cos(x)*cos(y)+sin(x)*sin(y)", 0, "wrong", ""),
    (227, "AlgEquiv", "", "(-1)^n*cos(x)^n", "(-cos(x))^n", 1, "wrong", "no-real-point"),
    (231, "AlgEquiv", "", "2*cos(x)^2-1", "cos(2*x)", 1, "correct", ""),
    (232, "AlgEquiv", "", "1.0*cos(1200*%pi*x)", "cos(1200*%pi*x)", 1, "correct", ""),
    (235, "AlgEquiv", "", "2*cos(2*x)+x+1", "-sin(x)^2+3*cos(x)^2+x", 1, "correct", ""),
    (237, "AlgEquiv", "", "4*x*cos(x^12/%pi)", "x*cos(x^12/%pi)", 0, "wrong", ""),
    (245, "AlgEquiv", "", "1/(1+exp(-2*x))", "tanh(x)/2+1/2", 1, "correct", ""),
    (268, "AlgEquiv", "", "sin((2*%pi*n-%pi)/2)", "-cos(n*%pi)", 1, "correct", ""),
    (269, "AlgEquiv", "", "sin(x/2)/(1+tan(x)*tan(x/2))", "sin(x/2)*cos(x)", 1, "correct", ""),
    (291, "AlgEquiv", "", "log(a^2*b)", "2*log(a)+log(b)", 1, "correct", ""),
    (292, "AlgEquiv", "", "(2*log(2*x)+x)/(2*x)", "(log(2*x)+2)/(2*sqrt(x))", 0, "wrong", ""),
    (293, "AlgEquiv", "", "log(abs((x^2-9)))", "log(abs(x-3))+log(abs(x+3))", 0, "correct", "log-abs"),
    (294, "AlgEquiv", "", "lg(10^x)", "x", 1, "correct", ""),
    (303, "AlgEquiv", "", "x^log(y)", "y^log(x)", 1, "correct", ""),
    (305, "AlgEquiv", "", "log((x+1)/(1-x))", "-log((1-x)/(x+1))", 1, "correct", ""),
    (308, "AlgEquiv", "", "log((x+1)/(1-x))", "-log((1-x)/(x+2))", 0, "wrong", ""),
    (370, "AlgEquiv", "", "(a^b)^c", "a^(b*c)", 0, "correct", "positive-powers"),
    (372, "AlgEquiv", "", "(n+1)^((n+2)/(n+1))/(n+2)", "1/(n+2)*((n+1)^(1/(n+1)))^(n+2)", 0, "correct", "combine-powers"),
    (426, "AlgEquiv", "", "258552*x^7*(81*x^8+1)^398", "x^3*(x^4+1)^399", 0, "wrong", ""),
    (642, "AlgEquiv", "", "2*inf", "inf", 0, "correct", "inf"),
    (658, "AlgEquiv", "", "sqrt(12)", "2*sqrt(3)", 1, "correct", ""),
    (659, "AlgEquiv", "", "sqrt(11+6*sqrt(2))", "3+sqrt(2)", 1, "correct", ""),
    (660, "AlgEquiv", "", "(19601-13860*sqrt(2))^(7/4)", "(5*sqrt(2)-7)^7", 1, "correct", ""),
    (661, "AlgEquiv", "", "(19601-13861*sqrt(2))^(7/4)", "(5*sqrt(2)-7)^7", 0, "unparseable", ""),
    (662, "AlgEquiv", "", "(19601-13861*sqrt(2))^(7/4)", "(5*sqrt(2)-7)^7", 0, "unparseable", ""),
    (663, "AlgEquiv", "", "sqrt(2*log(26)+4-2*log(2))", "sqrt(2*log(13)+4)", 1, "correct", ""),
    (664,
     "AlgEquiv",
     "",
     "sqrt(2)*sqrt(3)+2*(sqrt(2/3))*x-(2/3)*(sqrt(2/3))*x^2+(4/9)*(sqrt(2/3))*x^3",
     "4*sqrt(6)*x^3/27-(2*sqrt(6)*x^2)/9+(2*sqrt(6)*x)/3+sqrt(6)",
     1,
     "correct",
     ""),
    (718, "AlgEquiv", "", "abs(x^2-4)/(abs(x-2)*abs(x+2))", "1", -3, "correct", ""),
    (719, "AlgEquiv", "", "abs(x^2-4)", "abs(x-2)*abs(x+2)", -3, "correct", ""),
    (720, "AlgEquiv", "", "(sqrt(108)+10)^(1/3)-(sqrt(108)-10)^(1/3)", "2", -3, "correct", ""),
    (721, "AlgEquiv", "", "(sqrt(2+sqrt(2))+sqrt(2-sqrt(2)))/(2*sqrt(2))", "sqrt(sqrt(2)+2)/2", -3, "correct", ""),
    (722, "AlgEquiv", "", "sqrt(2*x*sqrt(x^2+1)+2*x^2+1)-sqrt(x^2+1)-x", "0", -3, "correct", ""),
    (723, "AlgEquiv", "", "(77+20*sqrt(13))^(1/6)-(77-20*sqrt(13))^(1/6)", "1", -3, "correct", ""),
    (724, "AlgEquiv", "", "(930249+416020*sqrt(5))^(1/30)-(930249-416020*sqrt(5))^(1/30)", "1", -3, "correct", ""),
    (726,
     "AlgEquiv",
     "",
     "cos(2*%pi/17)",
     ("(-1+sqrt(17)+sqrt(34-2*sqrt(17)))/16+(2*sqrt(17+3*sqrt(17)-sqrt(34-2*sqrt(17))-2*sqrt(34+2*sqrt("
         "17))))/16"),
     -3,
     "correct",
     ""),
    (2462, "NumRelative", "", "1/0", "0", -1, "unparseable", ""),
    (2471, "NumRelative", "", "1.1", "1", 0, "wrong", ""),
    (2472, "NumRelative", "", "1.05", "1", 1, "correct", ""),
    (2473, "NumRelative", "", "0.95", "1", 1, "correct", ""),
    (2474, "NumRelative", "", "0.949", "1", 0, "wrong", ""),
    (2475, "NumRelative", "", "1.05e33", "1e33", 1, "correct", ""),
    (2476, "NumRelative", "", "1.06e33", "1e33", 0, "wrong", ""),
    (2477, "NumRelative", "", "0.95e33", "1e33", 1, "correct", ""),
    (2478, "NumRelative", "", "0.949e33", "1e33", 0, "wrong", ""),
    (2479, "NumRelative", "", "1.05e-33", "1e-33", 1, "correct", ""),
    (2480, "NumRelative", "", "1.06e-33", "1e-33", 0, "wrong", ""),
    (2481, "NumRelative", "", "0.95e-33", "1e-33", 1, "correct", ""),
    (2482, "NumRelative", "", "0.949e-33", "1e-33", 0, "wrong", ""),
    (2485, "NumRelative", "0.1", "1.05", "1", 1, "correct", ""),
    (2486, "NumRelative", "0.1", "1.05", "3", 0, "wrong", ""),
    (2487, "NumRelative", "0.001", "3.14", "pi", 1, "correct", ""),
    (2488, "NumRelative", "", "inf", "0", 0, "unparseable", ""),
    (2489, "NumRelative", "", "1", "[1,2]", 0, "wrong", ""),
    (2490, "NumRelative", "", "[1,2]", "[1,2,3]", 0, "wrong", ""),
    (2491, "NumRelative", "", "[1,2]", "[1,2]", 1, "correct", ""),
    (2492, "NumRelative", "", "[3.141,1.414]", "[pi,sqrt(2)]", 1, "correct", ""),
    (2493, "NumRelative", "0.01", "[3,1.414]", "[pi,sqrt(2)]", 0, "wrong", ""),
    (2508, "NumAbsolute", "", "1/0", "0", -1, "unparseable", ""),
    (2514, "NumAbsolute", "", "1.1", "1", 0, "wrong", ""),
    (2515, "NumAbsolute", "", "1.05", "1", 1, "correct", ""),
    (2516, "NumAbsolute", "0.1", "1.05", "1", 1, "correct", ""),
    (2517, "NumAbsolute", "0.1", "1.05", "3", 0, "wrong", ""),
    (2518, "NumAbsolute", "0.001", "3.14", "pi", 0, "wrong", ""),
    (2519, "NumAbsolute", "0.0001", "1.41e-2", "1.41e-2", 1, "correct", ""),
    (2520, "NumAbsolute", "0.0001", "0.0141", "1.41e-2", 1, "correct", ""),
    (2521, "NumAbsolute", "0.0001", "0.00141", "0.00141", 1, "correct", ""),
    (2522, "NumAbsolute", "0.0001", "0.00141", "1.41*10^-3", 1, "correct", ""),
    (2523, "NumAbsolute", "0.0001", "1.41*10^-3", "1.41*10^-3", 1, "correct", ""),
    (2524, "NumAbsolute", "0.01", "[3.141,1.414]", "[pi,sqrt(2)]", 1, "correct", ""),
    (2525, "NumAbsolute", "0.01", "[3,1.414]", "[pi,sqrt(2)]", 0, "wrong", ""),
    (2541, "NumSigFigs", "3", "1/0", "3", -1, "unparseable", ""),
    (2545, "NumSigFigs", "1", "(", "1", -1, "unparseable", ""),
    (2550, "NumSigFigs", "4", "pi", "pi", 0, "wrong", ""),
    (2551, "NumSigFigs", "2", "0", "0", 0, "wrong", ""),
    (2552, "NumSigFigs", "1", "0", "0", 1, "correct", ""),
    (2553, "NumSigFigs", "1", "0.0", "0", 1, "correct", ""),
    (2554, "NumSigFigs", "2", "0.0", "0", 0, "wrong", ""),
    (2555, "NumSigFigs", "2", "0", "0.0", 0, "wrong", ""),
    (2556, "NumSigFigs", "2", "0.0", "0.0", 0, "wrong", ""),
    (2557, "NumSigFigs", "2", "0.00", "0.00", 1, "correct", ""),
    (2558, "NumSigFigs", "2", "5.4e21", "5.3e21", 0, "wrong", ""),
    (2559, "NumSigFigs", "2", "5.3e21", "5.3e21", 1, "correct", ""),
    (2560, "NumSigFigs", "2", "5.3e22", "5.3e22", 1, "correct", ""),
    (2561, "NumSigFigs", "2", "5.3e20", "5.3e22", 0, "wrong", ""),
    (2563, "NumSigFigs", "2", "9.8", "10", 1, "correct", ""),
    (2564, "NumSigFigs", "2", "9.5", "10", 0, "wrong", ""),
    (2565, "NumSigFigs", "2", "10.0", "10", 0, "wrong", ""),
    (2566, "NumSigFigs", "9", "6.02214086e23", "6.02214086e23", 1, "correct", ""),
    (2567, "NumSigFigs", "9", "6.0221409e23", "6.02214086e23", 0, "wrong", ""),
    (2568, "NumSigFigs", "9", "6.02214087e23", "6.02214086e23", 0, "wrong", ""),
    (2569, "NumSigFigs", "9", "6.02214085e23", "6.02214086e23", 0, "wrong", ""),
    (2570, "NumSigFigs", "8", "5.3910632e-44", "5.3910632e-44", 1, "correct", ""),
    (2571, "NumSigFigs", "8", "5.391063e-44", "5.3910632e-44", 0, "wrong", ""),
    (2572, "NumSigFigs", "8", "5.3910631e-44", "5.3910632e-44", 0, "wrong", ""),
    (2573, "NumSigFigs", "8", "5.3910633e-44", "5.3910632e-44", 0, "wrong", ""),
    (2574, "NumSigFigs", "9", "1.61622938e-35", "1.61622938e-35", 1, "correct", ""),
    (2575, "NumSigFigs", "9", "1.6162294e-35", "1.61622938e-35", 0, "wrong", ""),
    (2576, "NumSigFigs", "9", "1.61622939e-35", "1.61622938e-35", 0, "wrong", ""),
    (2577, "NumSigFigs", "9", "1.61622937e-35", "1.61622938e-35", 0, "wrong", ""),
    (2578, "NumSigFigs", "5", "1.2345e82", "1.2345e82", 1, "correct", ""),
    (2579, "NumSigFigs", "5", "1.2346e82", "1.2345e82", 0, "wrong", ""),
    (2580, "NumSigFigs", "5", "1.2344e82", "1.2345e82", 0, "wrong", ""),
    (2581, "NumSigFigs", "1", "1.234", "4", 0, "wrong", ""),
    (2585, "NumSigFigs", "3", "3.141", "3.1415927", 0, "wrong", ""),
    (2586, "NumSigFigs", "4", "3.141", "3.1415927", 0, "wrong", ""),
    (2587, "NumSigFigs", "4", "3.146", "3.1415927", 0, "wrong", ""),
    (2588, "NumSigFigs", "4", "3.147", "3.1415927", 0, "wrong", ""),
    (2589, "NumSigFigs", "4", "3.142", "3.1415927", 1, "correct", ""),
    (2590, "NumSigFigs", "4", "3.142", "pi", 1, "correct", ""),
    (2591, "NumSigFigs", "4", "3141", "3.1415927", 0, "wrong", ""),
    (2592, "NumSigFigs", "3", "0.00123", "0.001234567", 1, "correct", ""),
    (2593, "NumSigFigs", "3", "1.23e-3", "0.001234567", 1, "correct", ""),
    (2594, "NumSigFigs", "3", "138*10^-3", "138*10^-3", 1, "correct", ""),
    (2595, "NumSigFigs", "3", "-138*10^-3", "-138*10^-3", 1, "correct", ""),
    (2596, "NumSigFigs", "3", "138*10^-3", "-138*10^-3", 0, "wrong", ""),
    (2597, "NumSigFigs", "3", "1.38*10^-1", "138*10^-3", 1, "correct", ""),
    (2598, "NumSigFigs", "3", "1.24e-3", "0.001234567", 0, "wrong", ""),
    (2599, "NumSigFigs", "4", "1.235e-3", "0.001234567", 1, "correct", ""),
    (2600, "NumSigFigs", "2", "1000", "999", 1, "correct", ""),
    (2601, "NumSigFigs", "2", "1E3", "999", 0, "wrong", ""),
    (2602, "NumSigFigs", "1", "-100", "-149", 1, "correct", ""),
    (2603, "NumSigFigs", "1", "-0.05", "-0.0499", 1, "correct", ""),
    (2604, "NumSigFigs", "1", "-(0.05)", "-0.0499", 1, "correct", ""),
    (2605, "NumSigFigs", "3", "1170", "1174.34", 1, "correct", ""),
    (2606, "NumSigFigs", "3", "61300", "61250", 1, "correct", ""),
    (2607, "NumSigFigs", "4", "0.1667", "0.1667", 1, "correct", ""),
    (2608, "NumSigFigs", "4", "0.1666", "0.1667", 0, "wrong", ""),
    (2609, "NumSigFigs", "4", "0.1663", "0.1667", 0, "wrong", ""),
    (2610, "NumSigFigs", "4", "0.1662", "0.1667", 0, "wrong", ""),
    (2611, "NumSigFigs", "4", "0.166", "0.1667", 0, "wrong", ""),
    (2612, "NumSigFigs", "4", "0.16667", "0.1667", 0, "wrong", ""),
    (2613, "NumSigFigs", "4", "-3.141", "-3.1415927", 0, "wrong", ""),
    (2614, "NumSigFigs", "3", "-3.141", "-3.1415927", 0, "wrong", ""),
    (2615, "NumSigFigs", "4", "-3.141", "-3.1415927", 0, "wrong", ""),
    (2616, "NumSigFigs", "4", "-3.142", "-3.1415927", 1, "correct", ""),
    (2617, "NumSigFigs", "4", "3.142", "-3.1415927", 0, "wrong", ""),
    (2618, "NumSigFigs", "4", "-3.142", "3.1415927", 0, "wrong", ""),
    (2619, "NumSigFigs", "4", "-3.149", "3.1415927", 0, "wrong", ""),
    (2621, "NumSigFigs", "3", "2.15", "75701719/35227192", 1, "correct", ""),
    (2624, "NumSigFigs", "3", "0.0499", "0.04985", 1, "correct", ""),
    (2625, "NumSigFigs", "3", "0.0498", "0.04985", 0, "wrong", ""),
    (2626, "NumSigFigs", "3", "0.0498", "0.04975", 1, "correct", ""),
    (2627, "NumSigFigs", "3", "0.0497", "0.04975", 0, "wrong", ""),
    (2628, "NumSigFigs", "3", "0.0499", "0.0498", 0, "wrong", ""),
    (2629, "NumSigFigs", "3", "1.5", "1.500", 0, "wrong", ""),
    (2633, "NumSigFigs", "3", "1.50", "1.500", 1, "correct", ""),
    (2634, "NumSigFigs", "3", "1.500", "1.500", 0, "wrong", ""),
    (2635, "NumSigFigs", "3", "245.0", "245", 0, "wrong", ""),
    (2637, "NumSigFigs", "3", "180", "178.35", 0, "wrong", ""),
    (2638, "NumSigFigs", "3", "33", "33.1558", 0, "wrong", ""),
    (2727, "NumSigFigs", "3", "3.14", "pi", 1, "correct", ""),
    (2728, "NumSigFigs", "3", "3.15", "pi", 0, "wrong", ""),
    (2729, "NumSigFigs", "6", "1.73205", "sqrt(3)", 1, "correct", ""),
    (2738, "NumDecPlaces", "2", "1/0", "3", -1, "unparseable", ""),
    (2745, "NumDecPlaces", "1", "(", "1", -1, "unparseable", ""),
    (2746, "NumDecPlaces", "2", "x", "3.143", 0, "unparseable", ""),
    (2750, "NumDecPlaces", "3", "pi", "3.000", 0, "wrong", ""),
    (2751, "NumDecPlaces", "2", "3.14", "3.143", 1, "correct", ""),
    (2755, "NumDecPlaces", "2", "3.14", "3.14", 1, "correct", ""),
    (2756, "NumDecPlaces", "3", "3.140", "3.140", 1, "correct", ""),
    (2757, "NumDecPlaces", "4", "3141.5972", "3141.5972", 1, "correct", ""),
    (2758, "NumDecPlaces", "2", "4.14", "3.14", 0, "wrong", ""),
    (2759, "NumDecPlaces", "4", "3.1416", "pi", 1, "correct", ""),
    (2760, "NumDecPlaces", "1", "-7.3", "-7.3", 1, "correct", ""),
    (2761, "NumDecPlaces", "1", "3.14", "3.143", 0, "correct", "decimals-written"),
    (2765, "NumDecPlaces", "1", "3.14", "3.143", 0, "correct", "decimals-written"),
    (2766, "NumDecPlaces", "3", "3.14", "3.140", 0, "correct", "decimals-written"),
    (2767, "NumDecPlaces", "4", "7.000", "7", 0, "correct", "decimals-written"),
    (2768, "NumDecPlaces", "4", "7.0000", "7", 1, "correct", ""),
    (2769, "NumDecPlaces", "3", "8.0000", "7", 0, "wrong", ""),
    (2773, "NumDecPlaces", "3", "4.000", "3.99999", 1, "correct", ""),
]


def maxima(text: str) -> str:
    """STACK's Maxima spelling of π and e, as examprep spells them."""
    return text.replace("%pi", "pi").replace("%e", "e")


_NUMBER = re.compile(r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KNOWN = set(FUNCTIONS) | set(FUNCTION_ALIASES) | set(CONSTANTS)


def names(*texts: str) -> tuple[str, ...]:
    """The variables of an AlgEquiv row: every name in either answer that is no function or constant."""
    found = {m.group() for t in texts for m in _NAME.finditer(_NUMBER.sub("0", maxima(t)))}
    return tuple(sorted(found - _KNOWN))


def part_for(test: str, option: str, teacher: str, student: str, domain: str = "positive") -> Part:
    teacher = maxima(teacher)
    if test == "AlgEquiv":
        variables = names(teacher, student)
        return Part("a", "a", "expression", teacher, tolerance=EXACT, exact=teacher, variables=variables,
                    domains=tuple((v, domain) for v in variables))
    tolerance = {"NumRelative": lambda: Tolerance("rtol", float(option or 0.05), 0.0),
                 "NumAbsolute": lambda: Tolerance("atol", float(option or 0.05), 0.0),
                 "NumSigFigs": lambda: Tolerance("sigfigs-strict", int(option)),
                 "NumDecPlaces": lambda: Tolerance("decimals", int(option), 0.0)}[test]()
    expected = evaluate_all(parse_text(teacher))
    if isinstance(expected, list):
        return Part("a", "a", "vector", expected, tolerance=tolerance, shape=(len(expected),))
    return Part("a", "a", "number", expected, tolerance=tolerance)


def examprep_verdict(test: str, option: str, student: str, teacher: str, domain: str = "positive") -> str:
    part = part_for(test, option, teacher, student, domain)
    if key_part_error(part):
        return "key refused"
    return check_part(part, maxima(student)).status


def accepts(stack: int) -> bool:
    return stack in (1, -3)


@pytest.mark.parametrize("row", ROWS, ids=[f"{r[1]}-line{r[0]}" for r in ROWS])
def test_examprep_gives_the_transcribed_verdict(row):
    line, test, option, student, teacher, stack, examprep, why = row
    assert examprep_verdict(test, option, student, teacher) == examprep, (line, student, teacher)


def test_every_row_where_the_verdicts_differ_carries_its_reason():
    for line, test, _option, student, teacher, stack, examprep, why in ROWS:
        assert why == "" or why in WHY, (line, why)
        if accepts(stack) != (examprep == "correct"):
            assert why, f"line {line}: {test} {student!r} vs {teacher!r}: STACK {stack}, examprep {examprep}, no reason"
        if stack == -1:
            assert examprep in ("unparseable", "blank"), line      # invalid in STACK: unreadable here
    assert {r[7] for r in ROWS} - {""} == set(WHY), "a reason no row uses"


TABLE = {"NumRelative": (22, 0), "NumAbsolute": (13, 0), "NumSigFigs": (83, 0), "NumDecPlaces": (14, 4), "AlgEquiv": (82, 19)}


def test_the_table_of_agreement_in_the_module_docstring():
    counts = {test: [0, 0] for test in TABLE}
    for _line, test, _option, _student, _teacher, stack, examprep, _why in ROWS:
        counts[test][accepts(stack) != (examprep == "correct")] += 1
    assert {t: tuple(c) for t, c in counts.items()} == TABLE


# The rows where STACK's variables may be negative: with the part's variables declared real
# (variables = {x = "real"}), examprep agrees with STACK.
REAL_ROWS = [(156, "x", "sqrt(x^2)", 0), (161, "abs(x)", "sqrt(x^2)", 1),
             (163, "1/abs(x)^(1/3)", "(abs(x)^(1/3)/abs(x))^(1/2)", 1)]


@pytest.mark.parametrize("line,student,teacher,stack", REAL_ROWS)
def test_declared_real_variables_agree_with_stack(line, student, teacher, stack):
    assert (examprep_verdict("AlgEquiv", "", student, teacher, domain="real") == "correct") == accepts(stack), line
